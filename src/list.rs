//! `fdlab list`: what can be put in a scenario.

use fdlab_protocol::decay::DataflowDecayConfig;
use fdlab_protocol::fixed::FixedTimeoutConfig;
use fdlab_protocol::phi::PhiAccrualConfig;
use fdlab_protocol::probe::AdaptiveProbeConfig;
use fdlab_protocol::DetectorConfig;

pub fn run() -> Result<(), String> {
    say!("Built-in scenarios (`fdlab run NAME`; the files are under scenarios/builtin/):\n");
    for (name, _) in fdlab_scenarios::builtin() {
        let scenario = fdlab_scenarios::resolve(name).map_err(|e| e.to_string())?;
        say!(
            "  {name:<22} {:>3} seeds  {}",
            scenario.seeds,
            scenario.description.trim()
        );
    }
    say!();
    say!("Detector kinds (keys of a [[detectors]] table or of `fdlab trace --detector`, with defaults):\n");
    let kinds = [
        (
            DetectorConfig::FixedTimeout(FixedTimeoutConfig::default()),
            "heartbeat deadline; optional: suspect_after",
        ),
        (
            DetectorConfig::PhiAccrual(PhiAccrualConfig::default()),
            "Hayashibara et al. / Akka; optional: suspect_threshold; distribution: normal | normal-exact | exponential; history: akka | every-interval",
        ),
        (
            DetectorConfig::AdaptiveProbe(AdaptiveProbeConfig::default()),
            "Orleans probes with a learned timeout; min_timeout defaults to initial/2, max_timeout to 4 x initial",
        ),
        (
            DetectorConfig::DataflowDecay(DataflowDecayConfig::default()),
            "health score carried by the data stream; grace: none | one-interval; decay_per: tick | missed-frame; ewma_samples: every-interval | skip-backlog",
        ),
    ];
    for (config, note) in kinds {
        let text = toml::to_string(&config).map_err(|e| e.to_string())?;
        say!("# {}: {note}\n{text}", config.kind());
    }
    say!(
        "# two-stage: a fast detector raises Suspect, a slow one confirms Failed\n\
         kind = \"two-stage\"\nfast = {{ kind = \"dataflow-decay\" }}\nconfirm = {{ kind = \"phi-accrual\" }}"
    );
    Ok(())
}
