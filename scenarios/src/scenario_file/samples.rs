//! Empirical distributions' samples files: found next to the scenario file,
//! read within a size limit, each value checked with its line.

use super::*;

/// Every distribution of `scenario` that may be empirical, with its key path.
pub(super) fn dists_mut(scenario: &mut Scenario) -> Vec<(String, &mut Dist)> {
    let mut dists: Vec<(String, &mut Dist)> = vec![
        ("network.latency".to_string(), &mut scenario.network.latency),
        (
            "workload.interval".to_string(),
            &mut scenario.workload.interval,
        ),
        (
            "workload.service_time".to_string(),
            &mut scenario.workload.service_time,
        ),
    ];
    if let Some(d) = &mut scenario.network.data_latency {
        dists.push(("network.data_latency".to_string(), d));
    }
    if let Some(d) = &mut scenario.workload.on {
        dists.push(("workload.on".to_string(), d));
    }
    if let Some(d) = &mut scenario.workload.off {
        dists.push(("workload.off".to_string(), d));
    }
    for (i, r) in scenario.random_faults.iter_mut().enumerate() {
        if let Some(d) = &mut r.duration {
            dists.push((format!("random_faults[{i}].duration"), d));
        }
    }
    if let Some(m) = &mut scenario.membership {
        dists.push(("membership.table_latency".to_string(), &mut m.table_latency));
    }
    dists
}

/// Fills the samples of every `dist = "empirical"` from its CSV file.
pub(super) fn load_empirical(
    doc: &Doc<'_>,
    scenario: &mut Scenario,
    base_dir: Option<&Path>,
) -> Result<(), ScenarioFileError> {
    let mut dists = dists_mut(scenario);
    dists.sort_by_key(|(path, _)| doc.start(path));
    for (path, dist) in dists {
        if let Dist::Empirical { file, samples } = dist {
            *samples = read_samples(doc, &format!("{path}.file"), file, base_dir)?;
        }
    }
    Ok(())
}

/// The files fdlab read to load `scenario` from the file at `path`: the file
/// itself and the samples files of its empirical distributions. A command
/// checks that none of its outputs is one of them.
pub fn files_read(path: &Path, scenario: &Scenario) -> Vec<std::path::PathBuf> {
    let base_dir = path.parent().unwrap_or(Path::new(""));
    let mut copy = scenario.clone();
    let mut files = vec![path.to_path_buf()];
    for (_, dist) in dists_mut(&mut copy) {
        if let Dist::Empirical { file, .. } = dist {
            files.push(base_dir.join(file.as_str()));
        }
    }
    files
}

/// Reads one column of millisecond values (an optional header line; blank and
/// `#` lines skipped) from the CSV file `name` (at most [`SAMPLES_FILE_LIMIT`]
/// bytes), named at `key` of the scenario. The file may be anything a user
/// named by mistake: errors quote only a short excerpt of it.
pub(super) fn read_samples(
    doc: &Doc<'_>,
    key: &str,
    name: &str,
    base_dir: Option<&Path>,
) -> Result<Vec<Nanos>, ScenarioFileError> {
    let Some(base_dir) = base_dir else {
        return Err(doc.error(
            key,
            "an empirical distribution reads its samples from a CSV file, which a built-in \
             scenario cannot; copy the scenario to a file next to the CSV and run that file",
        ));
    };
    if name.trim().is_empty() {
        return Err(doc.error(key, "must name a CSV file of samples in milliseconds"));
    }
    let path = base_dir.join(name);
    let data = read_file_limited(&path, SAMPLES_FILE_LIMIT).map_err(|e| {
        doc.error(
            key,
            format!("cannot read the samples file `{}`: {e}", path.display()),
        )
    })?;
    let csv_file = path.display().to_string();
    let named_at = format!("{}:{}", doc.file, doc.line_of(key));
    let error = |byte: u64, problem: String| ScenarioFileError {
        file: csv_file.clone(),
        line: Some(usize::try_from(line_of_record(&data, byte)).unwrap_or(usize::MAX)),
        key: Some(key.to_string()),
        problem: format!("{} (samples file named at {named_at})", bounded(&problem)),
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .from_reader(data.as_slice());
    let mut record = csv::ByteRecord::new();
    let mut samples = Vec::new();
    let mut first = true;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let byte = e.position().map_or(0, |p| p.byte());
                return Err(error(byte, format!("malformed CSV: {e}")));
            }
        }
        if is_blank(&record) {
            continue;
        }
        let at = byte_of(&record);
        let is_first = std::mem::replace(&mut first, false);
        let fields: Vec<&[u8]> = record.iter().map(<[u8]>::trim_ascii).collect();
        let field = match fields.as_slice() {
            [one] => *one,
            // A trailing comma leaves an empty second field.
            [one, rest @ ..] if rest.iter().all(|f| f.is_empty()) => *one,
            _ => {
                return Err(error(
                    at,
                    format!(
                        "expected one column of milliseconds, found {} columns",
                        fields.len()
                    ),
                ))
            }
        };
        let text = String::from_utf8_lossy(field);
        match Nanos::parse_millis(&text) {
            Ok(sample) => samples.push(sample),
            // A first line of words is a header.
            Err(_) if is_first && field.first().is_some_and(|b| b.is_ascii_alphabetic()) => {}
            Err(_) => {
                return Err(error(
                    at,
                    format!(
                        "`{}` is not a number of milliseconds (0 or more, like 1.5)",
                        excerpt_bytes(field)
                    ),
                ))
            }
        }
    }
    Ok(samples)
}
