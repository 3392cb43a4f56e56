//! Every sample output in the READMEs and docs/ is what its command prints
//! today (issue 22): each test runs the command a sample shows and compares
//! its whole output with the sample, found by [`sample`].

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of `path`, relative to the repository root.
fn doc(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The sample output that `marker` introduces in `doc`: the rest of the
/// ```` ```text ```` block when `marker` is inside one (a `$ command` line,
/// ending in a newline), else the whole next ```` ```text ```` block (after
/// a command in a ```` ```sh ```` block, or after prose).
fn sample<'d>(doc: &'d str, marker: &str) -> &'d str {
    const TEXT: &str = "```text\n";
    let at = doc
        .find(marker)
        .unwrap_or_else(|| panic!("the doc shows {marker:?}"))
        + marker.len();
    let fences: Vec<&str> = doc[..at].lines().filter(|l| l.starts_with("```")).collect();
    let start = if fences.len() % 2 == 1 && fences.last() == Some(&TEXT.trim_end()) {
        assert!(
            marker.ends_with('\n'),
            "a marker in a block is a whole line"
        );
        at
    } else {
        let open = doc[at..]
            .find(TEXT)
            .unwrap_or_else(|| panic!("a ```text block follows {marker:?}"));
        at + open + TEXT.len()
    };
    let len = doc[start..]
        .find("```")
        .unwrap_or_else(|| panic!("the block after {marker:?} ends"));
    &doc[start..start + len]
}

/// The whole ```` ```toml ```` block after `marker`.
fn toml_after<'d>(doc: &'d str, marker: &str) -> &'d str {
    const TOML: &str = "```toml\n";
    let at = doc
        .find(marker)
        .unwrap_or_else(|| panic!("the doc shows {marker:?}"));
    let start = at + doc[at..].find(TOML).expect("a ```toml block follows") + TOML.len();
    let len = doc[start..].find("```").expect("the block ends");
    &doc[start..start + len]
}

/// Runs `retry-policy` in `dir` with no `RETRY_*` variable set.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    run_with(dir, args, &[])
}

/// Runs `retry-policy` in `dir` with `vars` the only `RETRY_*` variables set.
fn run_with(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-policy"));
    cmd.args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("RETRY_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(vars.iter().copied()).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// retrykit-config's README shows `retry-policy show outbox --seed 1`; the
/// sample is that command's whole output against examples/retry.toml.
#[test]
fn the_config_readme_show_sample_is_what_the_command_prints() {
    let readme = doc("retry-config/README.md");
    let shown = sample(
        &readme,
        "$ retry-policy show outbox --seed 1 -c examples/retry.toml\n",
    );
    let out = run_in(
        &root(),
        &["show", "outbox", "--seed", "1", "-c", "examples/retry.toml"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), shown);
}

/// Writes `file` as `retry.toml` in a fresh directory and runs
/// `retry-policy check retry.toml` there: its stdout, and its exit code.
fn check(file: &str) -> (String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("retry.toml"), file).unwrap();
    let out = run_in(dir.path(), &["check", "retry.toml"]);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    (text(&out.stdout), out.status.code())
}

/// docs/policy-file.md's misspelled key: its file, and what `check` prints.
#[test]
fn the_policy_file_doc_diagnostic_is_what_check_prints() {
    let page = doc("docs/policy-file.md");
    let file = toml_after(&page, "never silently ignored. For a `retry.toml` of");
    let (said, code) = check(file);
    assert_eq!(code, Some(1));
    assert_eq!(said, sample(&page, "$ retry-policy check retry.toml\n"));
}

/// retrykit-config's README: its policy file with `max_attempts` misspelled,
/// and what `check` prints.
#[test]
fn the_config_readme_diagnostic_is_what_check_prints() {
    let readme = doc("retry-config/README.md");
    let file = toml_after(&readme, "## The file");
    let right = "\nmax_attempts = 8 ";
    assert_eq!(file.matches(right).count(), 1, "one line to misspell");
    let (said, code) = check(&file.replace(right, "\nmax_atempts = 8 "));
    assert_eq!(code, Some(1));
    assert_eq!(said, sample(&readme, "$ retry-policy check retry.toml\n"));
}

/// docs/chaos.md: `show` of the outbox demo's staging `publish`, and the
/// production refusal `check` prints for the doc's file.
#[test]
fn the_chaos_doc_samples_are_what_the_commands_print() {
    let page = doc("docs/chaos.md");
    let shown =
        "$ retry-policy --config examples/retry.toml --profile staging show publish --seed 1\n";
    let args: Vec<&str> = shown[2..].split_whitespace().skip(1).collect();
    let out = run_in(&root(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), sample(&page, shown));

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("retry.toml"),
        toml_after(&page, "for this file:"),
    )
    .unwrap();
    let out = run_in(dir.path(), &["check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), sample(&page, "$ retry-policy check\n"));
}

/// Runs `retry-policy` from the repository root with `args`, the last of
/// which is `--svg FILE` for a `FILE` of the repository's: the sample output
/// after `shown` (the command as the doc shows it) in `page` is what the
/// command prints, and the plot in the repository is what it writes.
fn simulated(page: &str, shown: &str, args: &[&str]) {
    let text_of_page = doc(page);
    let (svg, args) = args.split_last().expect("the --svg file");
    assert_eq!(args.last(), Some(&"--svg"));
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("plot.svg");
    let mut args = args.to_vec();
    args.push(plot.to_str().unwrap());
    let out = run_in(&root(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), sample(&text_of_page, shown));
    assert!(
        std::fs::read_to_string(&plot).unwrap() == doc(svg),
        "{svg} is not what `{shown}` writes"
    );
}

/// docs/simulator.md's herd: the table and the plot.
#[test]
fn the_simulator_doc_herd_sample_and_plot_are_what_simulate_makes() {
    simulated(
        "docs/simulator.md",
        "simulate outbox --each-jitter -c examples/retry.toml --svg examples/plots/herd.svg\n",
        &[
            "simulate",
            "outbox",
            "--each-jitter",
            "-c",
            "examples/retry.toml",
            "--svg",
            "examples/plots/herd.svg",
        ],
    );
}

/// docs/recovery.md's figures (issue 42): what `simulate` prints for the
/// 2 s and 10 s outages with a breaker of no key set, and docs/simulator.md's
/// breaker table, an excerpt of the 2 s one.
#[test]
fn the_recovery_doc_samples_are_what_simulate_prints() {
    let page = doc("docs/recovery.md");
    let mut two = String::new();
    for outage in ["2s", "10s"] {
        let shown =
            format!("retry-policy simulate outbox -c examples/recovery.toml --outage {outage}\n");
        let args = [
            "simulate",
            "outbox",
            "-c",
            "examples/recovery.toml",
            "--outage",
            outage,
        ];
        let out = run_in(&root(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        assert_eq!(printed, sample(&page, &shown), "--outage {outage}");
        if outage == "2s" {
            two = printed;
        }
    }
    let simulator = doc("docs/simulator.md");
    let excerpt = sample(
        &simulator,
        "`retry-policy simulate outbox -c examples/recovery.toml --outage 2s`",
    );
    assert!(excerpt.lines().count() >= 5, "{excerpt}");
    assert!(
        two.contains(excerpt),
        "docs/simulator.md's breaker table:\n{excerpt}"
    );
}

/// docs/recovery.md's "Not done": one local breaker (`--breaker-processes
/// 1`) peaks at 21 calls a tick after the 2 s and the 10 s outage, as the
/// page says, where ten peak higher.
#[test]
fn the_recovery_doc_one_local_breaker_peaks_as_it_says() {
    let page = doc("docs/recovery.md");
    let shown = "`retry-policy simulate outbox -c examples/recovery.toml --outage 2s --breaker-processes 1`";
    assert!(page.contains(shown), "the page shows {shown}");
    assert!(page.contains("peaks at 21 in its `local` row"), "{page}");
    for outage in ["2s", "10s"] {
        let args = [
            "simulate",
            "outbox",
            "-c",
            "examples/recovery.toml",
            "--outage",
            outage,
            "--breaker-processes",
            "1",
        ];
        let out = run_in(&root(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        let local = printed
            .lines()
            .find(|l| l.starts_with("outbox  local "))
            .unwrap_or_else(|| panic!("no local row:\n{printed}"));
        let peak = local.split_whitespace().nth(3);
        assert_eq!(peak, Some("21"), "--outage {outage}: {local}");
    }
}

/// docs/recovery.md's peers table (issue 42): examples/peers.toml's peers
/// beside outbox on the 2 s and 10 s outages, one table; the page shows the
/// output up to the charts, so its sample is where the output starts.
#[test]
fn the_recovery_doc_peers_tables_are_what_simulate_prints() {
    let page = doc("docs/recovery.md");
    for outage in ["2s", "10s"] {
        let shown = format!(
            "retry-policy simulate outbox --compare aws-standard,polly-v8,resilience4j,backon \
             -c examples/peers.toml --outage {outage}\n"
        );
        let args = [
            "simulate",
            "outbox",
            "--compare",
            "aws-standard,polly-v8,resilience4j,backon",
            "-c",
            "examples/peers.toml",
            "--outage",
            outage,
        ];
        let out = run_in(&root(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        let excerpt = sample(&page, &shown);
        assert!(
            excerpt.contains("polly-v8      local") && excerpt.contains("backon        none"),
            "the sample is the peers table:\n{excerpt}"
        );
        assert!(
            printed.starts_with(excerpt),
            "--outage {outage}: the page's sample is not how the output starts:\n{printed}"
        );
    }
}

/// docs/limits.md's slow scenario (issue 43): each table is what
/// `simulate --scenario slow` prints with examples/slow.toml.
#[test]
fn the_limits_doc_slow_samples_are_what_simulate_prints() {
    let page = doc("docs/limits.md");
    let shown = [
        "simulate unlimited --compare fixed --adaptive aimd,gradient --scenario slow -c examples/slow.toml\n",
        "simulate fixed --adaptive aimd,gradient --scenario slow -c examples/slow.toml --limit-processes 1\n",
        "simulate unlimited --compare fixed --adaptive aimd,gradient --scenario slow -c examples/slow.toml --limit-processes 50\n",
    ];
    for command in shown {
        // The command exactly as the page shows it.
        let args: Vec<&str> = command.split_whitespace().collect();
        let out = run_in(&root(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), sample(&page, command), "{command}");
    }
}

/// docs/simulator.md's contention scenario: the tables (whose 100-client
/// row the page's prose quotes) and the plot.
#[test]
fn the_simulator_doc_contention_sample_and_plot_are_what_simulate_makes() {
    simulated(
        "docs/simulator.md",
        "simulate --scenario contention --svg examples/plots/contention.svg\n",
        &[
            "simulate",
            "--scenario",
            "contention",
            "--svg",
            "examples/plots/contention.svg",
        ],
    );
}

/// The rows of `simulate POLICY --each-jitter` against examples/retry.toml
/// with `extra` options, each split at its whitespace, by `policy/jitter`.
fn herd_rows(extra: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["outbox", "--each-jitter"];
    args.extend_from_slice(extra);
    simulate_rows(&args, &[], "outbox/")
}

/// The table rows starting with `prefix` that `simulate ARGS -c
/// examples/retry.toml` prints with `vars` set, each split at its whitespace.
fn simulate_rows(args: &[&str], vars: &[(&str, &str)], prefix: &str) -> Vec<Vec<String>> {
    let args = [&["simulate"], args, &["-c", "examples/retry.toml"]].concat();
    let out = run_with(&root(), &args, vars);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

/// docs/fleet.md's table sets measured figures (one run of a real fleet,
/// not repeatable) beside predicted ones: each predicted figure is what
/// `simulate` says for that tick (10 ms: the plain model at 200 calls a
/// tick; 1 ms: the timer model the page names at 20 a tick, and the plain
/// model's peak in brackets).
#[test]
fn the_fleet_doc_predictions_are_what_simulate_says() {
    let page = doc("docs/fleet.md");
    let ten = herd_rows(&["--tick", "10ms", "--capacity", "200"]);
    let timer = herd_rows(&["--timer-resolution", "1ms", "--timer-skipped", "0.25"]);
    let plain = herd_rows(&[]);
    let row = |rows: &[Vec<String>], policy: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r[0] == policy)
            .unwrap_or_else(|| panic!("simulate has no row {policy}"))
            .clone()
    };
    let first = |cell: &str| cell.split('/').next().unwrap().trim().replace(' ', "");
    let mut checked = 0;
    // The first table; the send-rate section's table has its own columns.
    let first_table = &page[..page.find("\n## The clients' machine").unwrap_or(page.len())];
    for line in first_table.lines().filter(|l| l.starts_with("| outbox/")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (policy, tick) = (cells[1], cells[2]);
        // PEAK/TICK, CALLS, GAVE UP and P50 of simulate's table.
        let said = match tick {
            "10 ms" => row(&ten, policy),
            "1 ms" => row(&timer, policy),
            other => panic!("a tick of {other}: {line}"),
        };
        let peak = match cells[3].split_once(" (plain: ") {
            Some((peak, bracket)) => {
                let plain_peak = bracket.trim_end_matches(')');
                assert_eq!(plain_peak, row(&plain, policy)[2], "{line}");
                peak
            }
            None => cells[3],
        };
        assert_eq!(peak, said[2], "peak: {line}");
        assert_eq!(cells[5], said[4], "calls: {line}");
        assert_eq!(first(cells[7]), said[8], "gave up: {line}");
        assert_eq!(first(cells[8]), said[9], "p50: {line}");
        checked += 1;
    }
    assert_eq!(checked, 8, "the table's rows were found");
}

/// docs/fleet.md's send-rate table sets measured figures beside predicted
/// ones: each predicted peak and call count, plain and send-rate, is what
/// `simulate` says for the row's policy, seed, tick and the rate the run
/// measured (printed to the 0.1 calls per ms a 10 ms tick measures).
#[test]
fn the_fleet_doc_send_rate_predictions_are_what_simulate_says() {
    let page = doc("docs/fleet.md");
    let at = page
        .find("\n## The clients' machine")
        .expect("docs/fleet.md has its send-rate section");
    let end = page.find("\n## Repeats").unwrap_or(page.len());
    let rows: Vec<Vec<String>> = fleet_table_rows(&page[at..end])
        .into_iter()
        // Its 11 columns; the summaries after it have fewer.
        .filter(|cells| cells.len() == 13)
        .collect();
    assert_eq!(rows.len(), 27, "the table's rows were found");
    std::thread::scope(|s| {
        for cells in &rows {
            s.spawn(move || check_send_rate_row(cells));
        }
    });
}

/// docs/fleet.md's repeats table sets the medians of five real runs beside
/// the medians of their five send-rate predictions: each row lists the
/// five rates its runs measured, and its predicted peak (median, min and
/// max) and predicted calls (median) are what `simulate` says at them.
#[test]
fn the_fleet_doc_repeat_predictions_are_what_simulate_says() {
    let page = doc("docs/fleet.md");
    let at = page
        .find("\n### The table, five runs a row")
        .expect("docs/fleet.md has its repeats table");
    // The section runs to the end of the page.
    let rows = fleet_table_rows(&page[at..]);
    assert!(
        rows.len() >= 27,
        "the table's rows were found: {}",
        rows.len()
    );
    std::thread::scope(|s| {
        for cells in &rows {
            s.spawn(move || check_repeat_row(cells));
        }
    });
}

/// docs/fleet.md's breaker table sets the medians of five real runs
/// beside predictions: each predicted figure (calls during the outage,
/// peak after it, drain, gave up) is what `simulate` says for the
/// harness's scenario, local as its four processes' breakers, fleet as one.
#[test]
fn the_fleet_doc_breaker_predictions_are_what_simulate_says() {
    let page = doc("docs/fleet.md");
    let shown = sample(
        &page,
        "    --repeat 5 --clients 2000 --processes 4 --outage 2s --capacity 10 --tick 10ms --seed 0\n",
    );
    let args = [
        "simulate",
        "broker",
        "-c",
        "examples/fleet-breaker.toml",
        "--clients",
        "2000",
        "--outage",
        "2s",
        "--capacity",
        "10",
        "--tick",
        "10ms",
        "--seed",
        "0",
        "--breaker-processes",
        "4",
    ];
    let out = run_in(&root(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    // A duration as milliseconds: `1.21s` or `985ms`.
    let ms = |cell: &str| -> f64 {
        match cell.strip_suffix("ms") {
            Some(ms) => ms.parse().unwrap(),
            None => 1000.0 * cell.trim_end_matches('s').parse::<f64>().unwrap(),
        }
    };
    let mut checked = 0;
    for scope in ["none", "local", "fleet"] {
        let doc_row: Vec<&str> = shown
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|cells| cells.len() == 12 && cells[0] == scope)
            .unwrap_or_else(|| panic!("the doc's table has {scope}"));
        let sim_row: Vec<&str> = said
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|cells| cells.len() > 8 && cells[0] == "broker" && cells[1] == scope)
            .unwrap_or_else(|| panic!("simulate has no {scope} row: {said}"));
        // BREAKER, OUTAGE CALLS, PREDICTED, DIFF, PEAK AFTER, PREDICTED,
        // DRAIN, PREDICTED, DIFF, GAVE UP, PREDICTED, KEPT UP against
        // POLICY, BREAKER, OUTAGE CALLS, PEAK AFTER, PEAK AT, DRAIN, ...,
        // GAVE UP (the ninth).
        assert_eq!(doc_row[2], sim_row[2], "outage calls, {scope}");
        assert_eq!(doc_row[5], sim_row[3], "peak after, {scope}");
        assert!(
            (ms(doc_row[7]) - ms(sim_row[5])).abs() < 5.0,
            "drain, {scope}"
        );
        assert_eq!(doc_row[10], sim_row[8], "gave up, {scope}");
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// The cells of docs/fleet.md's table rows in `text`: the rows of a
/// policy (`outbox/JITTER`, or `base B ms, ...`), split at their bars.
fn fleet_table_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("| outbox/") || l.starts_with("| base "))
        .map(|l| l.split('|').map(|c| c.trim().to_owned()).collect())
        .collect()
}

/// The environment and `simulate` flags of a fleet.md row's policy
/// (`outbox/JITTER`, or `base B ms, JITTER, N attempts`), tick and seed.
fn fleet_row_run<'a>(
    policy: &'a str,
    tick: &str,
    seed: &'a str,
) -> (Vec<(&'static str, &'a str)>, Vec<&'a str>) {
    let (jitter, mut vars) = match policy.strip_prefix("outbox/") {
        Some(jitter) => (jitter, vec![]),
        None => {
            let words: Vec<&str> = policy.split([' ', ',']).filter(|w| !w.is_empty()).collect();
            // base, B, ms, JITTER, N, attempts
            let base = match words[1] {
                "20" => "20ms",
                "50" => "50ms",
                other => panic!("a base of {other} ms: {policy}"),
            };
            (
                words[3],
                vec![
                    ("RETRY_POLICY__OUTBOX__BASE", base),
                    ("RETRY_POLICY__OUTBOX__MAX_ATTEMPTS", words[4]),
                ],
            )
        }
    };
    vars.push(("RETRY_POLICY__OUTBOX__JITTER", jitter));
    let mut args = vec!["outbox", "--seed", seed];
    match tick {
        "10 ms" => args.extend(["--tick", "10ms", "--capacity", "200"]),
        "1 ms" => args.extend([
            "--capacity",
            "20",
            "--timer-resolution",
            "1ms",
            "--timer-skipped",
            "0.25",
        ]),
        other => panic!("a tick of {other}: {policy}"),
    }
    (vars, args)
}

/// One row of docs/fleet.md's repeats table: policy, tick, seed, load, the
/// five rates, the predicted peak as `MEDIAN (MIN–MAX)`, ..., the
/// predicted calls' median.
fn check_repeat_row(cells: &[String]) {
    let line = cells.join(" | ");
    let (vars, args) = fleet_row_run(&cells[1], &cells[2], &cells[3]);
    let mut said: Vec<(u64, u64)> = cells[5]
        .split_whitespace()
        .map(|rate| {
            let row = simulate_rows(
                &[&args[..], &["--send-rate", rate]].concat(),
                &vars,
                "outbox ",
            );
            let row = row.first().unwrap_or_else(|| panic!("no row: {line}"));
            (row[2].parse().unwrap(), row[4].parse().unwrap())
        })
        .collect();
    assert_eq!(said.len(), 5, "five rates: {line}");
    said.sort_unstable();
    let peaks = format!("{} ({}–{})", said[2].0, said[0].0, said[4].0);
    assert_eq!(cells[6], peaks, "predicted peaks: {line}");
    let mut calls: Vec<u64> = said.iter().map(|s| s.1).collect();
    calls.sort_unstable();
    assert_eq!(cells[10], calls[2].to_string(), "predicted calls: {line}");
}

/// One row of docs/fleet.md's send-rate table: policy, tick, seed, load,
/// rate, the three peaks, the three call counts.
fn check_send_rate_row(cells: &[String]) {
    let line = cells.join(" | ");
    let (vars, args) = fleet_row_run(&cells[1], &cells[2], &cells[3]);
    let row = |args: &[&str]| -> Vec<String> {
        let rows = simulate_rows(args, &vars, "outbox ");
        rows.into_iter()
            .next()
            .unwrap_or_else(|| panic!("no row: {line}"))
    };
    let rate = cells[5].trim_end_matches("/ms");
    let plain = row(&args);
    let sent = row(&[&args[..], &["--send-rate", rate]].concat());
    // PEAK/TICK and CALLS of simulate's row.
    assert_eq!(
        (&cells[6], &cells[9]),
        (&plain[2], &plain[4]),
        "plain: {line}"
    );
    assert_eq!(
        (&cells[7], &cells[10]),
        (&sent[2], &sent[4]),
        "send-rate: {line}"
    );
}
