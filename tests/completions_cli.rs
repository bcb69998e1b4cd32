//! `fdlab completions SHELL` and `fdlab man`: generated from the same
//! argument definitions as `--help`, so they cannot drift from it.

mod common;

use common::{fdlab, text};

#[test]
fn completion_scripts_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = fdlab(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", text(&o.stderr));
        let script = text(&o.stdout);
        for command in ["run", "replay", "live", "sweep", "place", "swarm"] {
            assert!(script.contains(command), "{shell}: no {command}");
        }
        // The hidden node process is not offered.
        assert!(!script.contains("live-node"), "{shell}");
    }
    let o = fdlab(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("invalid value 'tcsh'"), "{err}");
}

#[test]
fn the_manual_has_a_page_per_command_with_its_options() {
    let o = fdlab(&["man"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = text(&o.stdout);
    assert!(page.starts_with(".ie \\n(.g .ds Aq"), "{}", &page[..80]);
    for title in [
        ".TH fdlab 1",
        ".TH fdlab-run 1",
        ".TH fdlab-live 1",
        ".TH fdlab-place 1",
    ] {
        assert!(page.contains(title), "no {title}");
    }
    assert!(page.contains("\\-\\-runs"), "fdlab-live's --runs");
    assert!(!page.contains("fdlab-live-node"));
}
