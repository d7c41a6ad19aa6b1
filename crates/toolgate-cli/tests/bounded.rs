//! The read-only tools run inside toolgate's own process, so whatever they
//! are asked to read must not make that process grow (issue 25): a file
//! holding one 1 GiB line once took `grep` to 1.28 GB. These tests run the
//! real binary, `toolgate call TOOL ARGS`, on such inputs and compare its
//! peak memory with that of a trivial call.
//!
//! # How memory is measured
//!
//! The number is the kernel's own: the peak resident set of the process
//! (`ru_maxrss`, which `wait4` returns for a child that has ended), as GNU
//! time prints it with `-f %M`. It covers the whole process (every thread,
//! every allocation, also memory mapped files that were touched), it cannot
//! miss a short peak as sampling `/proc/PID/status` could, and reading it
//! needs no code in toolgate. The `time` package provides it (`.ci/run`
//! installs it); without it these tests fail rather than pass quietly.
//!
//! A regression must fail the test, not the machine: each call runs under
//! `prlimit --data=512MiB`. `RLIMIT_DATA` counts the memory a process can
//! write (heap, anonymous mappings, thread stacks) and not the address
//! space it only reserves, so unlike `--as` it does not depend on the
//! number of cores (glibc reserves 64 MiB of address space per malloc
//! arena, up to eight arenas per core). A toolgate that tries to hold a
//! 1 GiB line then dies of a failed allocation at about 0.5 GB instead of
//! growing to 1.3 GB, and the test says so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]
#![allow(
    clippy::print_stderr,
    reason = "the peaks measured go to the test's log (cargo test -- --nocapture)"
)]

use std::io::{BufWriter, Write as _};
use std::path::Path;
use std::process::Output;

/// GNU time: `-f %M` prints the peak resident set in KiB.
const GNU_TIME: &str = "/usr/bin/time";

/// The memory limit every call runs under, in bytes (see the module docs).
const DATA_LIMIT: u64 = 512 * 1024 * 1024;

/// How far above a trivial call's peak a call may go, in KiB. A call that
/// read a 48 MiB line, or collected 200,000 names, would be well past it.
const SLACK_KIB: u64 = 16 * 1024;

const MIB: usize = 1024 * 1024;

/// A workspace with a home of its own beside it (not inside: the walks
/// would find toolgate's own files there).
struct Ws {
    dir: toolgate_test::TempHome,
}

/// One measured call.
struct Call {
    output: Output,
    /// Peak resident set, KiB.
    peak: u64,
}

impl Call {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
}

impl Ws {
    fn new() -> Self {
        for (tool, package) in [(GNU_TIME, "time"), ("/usr/bin/prlimit", "util-linux")] {
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: install the `{package}` package (.ci/run does)"
            );
        }
        let dir = toolgate_test::TempHome::builder()
            .workspace_dir("ws")
            .build()
            .unwrap();
        std::fs::write(dir.workspace().join("small.txt"), "a needle\n").unwrap();
        Self { dir }
    }

    fn root(&self) -> &Path {
        self.dir.workspace()
    }

    /// Writes `name`: a line of `len` copies of `fill`, then `rest`.
    fn long_line(&self, name: &str, fill: u8, len: usize, rest: &str) {
        let file = std::fs::File::create(self.root().join(name)).unwrap();
        let mut out = BufWriter::with_capacity(MIB, file);
        let chunk = vec![fill; MIB];
        for _ in 0..len / MIB {
            out.write_all(&chunk).unwrap();
        }
        out.write_all(&chunk[..len % MIB]).unwrap();
        out.write_all(b"\n").unwrap();
        out.write_all(rest.as_bytes()).unwrap();
        out.flush().unwrap();
    }

    /// `toolgate --mode yolo call TOOL ARGS` under the memory limit, with
    /// its peak resident set.
    fn call(&self, tool: &str, args: &str) -> Call {
        let report = self.dir.root().join("peak.txt");
        let mut cmd = self.dir.command("/usr/bin/prlimit");
        cmd.arg(format!("--data={DATA_LIMIT}"))
            .arg("--")
            .arg(GNU_TIME)
            .args(["-f", "%M", "-o"])
            .arg(&report)
            .arg(env!("CARGO_BIN_EXE_toolgate"))
            .args(["--mode", "yolo", "call", tool, args]);
        let output = cmd.output().unwrap();
        // `Command terminated by signal 6` comes first when it died.
        let report = std::fs::read_to_string(&report).unwrap();
        let peak = report
            .lines()
            .last()
            .and_then(|line| line.trim().parse().ok())
            .unwrap_or_else(|| panic!("no peak in GNU time's report: {report:?}"));
        let call = Call { output, peak };
        assert!(
            matches!(call.output.status.code(), Some(0 | 1)),
            "{tool} {args}: toolgate did not finish ({}; {report}), peak {} MiB, \
             {} MiB allowed; stderr: {}",
            call.output.status,
            call.peak / 1024,
            DATA_LIMIT / 1024 / 1024,
            tail(&call.stderr()),
        );
        call
    }

    /// A trivial call's peak: the baseline.
    fn baseline(&self) -> u64 {
        let call = self.call("grep", r#"{"pattern": "needle", "path": "small.txt"}"#);
        assert_eq!(call.stdout().trim_end(), "small.txt:1: a needle");
        call.peak
    }
}

/// The end of a long text, for messages.
fn tail(text: &str) -> &str {
    let start = text.len().saturating_sub(2000);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    &text[start..]
}

/// Checks that `call` succeeded (or failed, as `ok` says) and stayed within
/// [`SLACK_KIB`] of `baseline`; returns what it printed (stdout, or the
/// error on stderr).
fn bounded(what: &str, call: &Call, ok: bool, baseline: u64) -> String {
    let text = if ok { call.stdout() } else { call.stderr() };
    // The numbers, for the log of a run with --nocapture.
    eprintln!(
        "{what}: peak {} KiB, {:+} KiB from the baseline",
        call.peak,
        i128::from(call.peak) - i128::from(baseline)
    );
    assert_eq!(
        call.output.status.success(),
        ok,
        "{what}: {}{}",
        tail(&call.stdout()),
        tail(&call.stderr())
    );
    assert!(
        call.peak <= baseline + SLACK_KIB,
        "{what}: peak {} KiB, {} KiB over the baseline of {baseline} KiB (at most {SLACK_KIB} allowed)",
        call.peak,
        call.peak.saturating_sub(baseline),
    );
    text
}

/// The file of issue 25: one 1 GiB line (of text: NUL bytes would make it
/// binary and skipped for another reason), then a line holding `needle`.
/// Searching it reads 1 MiB of it and says the file was skipped; reading it
/// is refused by its size before a byte is read; a 48 MiB line is read in
/// a page of 1 MiB that says where the rest is.
#[test]
fn a_one_gib_line_costs_no_more_memory_than_a_short_one() {
    let ws = Ws::new();
    ws.long_line("huge.txt", b'a', 1024 * MIB, "needle\n");
    ws.long_line("wide.txt", b'w', 48 * MIB, "");
    let baseline = ws.baseline();

    let both = "(2 files skipped: a line longer than 1 MiB)";
    let out = bounded(
        "grep",
        &ws.call("grep", r#"{"pattern": "needle"}"#),
        true,
        baseline,
    );
    assert_eq!(out.trim_end(), format!("small.txt:1: a needle\n{both}"));
    let out = bounded(
        "search_code",
        &ws.call(
            "search_code",
            r#"{"pattern": "ne+dle", "context_lines": 5}"#,
        ),
        true,
        baseline,
    );
    assert_eq!(out.trim_end(), format!("small.txt:1: a needle\n{both}"));
    let out = bounded(
        "grep huge.txt",
        &ws.call("grep", r#"{"pattern": "needle", "path": "huge.txt"}"#),
        true,
        baseline,
    );
    assert_eq!(
        out.trim_end(),
        "no matches for text `needle` in `huge.txt` (1 file searched); \
         1 file skipped: a line longer than 1 MiB"
    );

    let error = bounded(
        "read_file huge.txt",
        &ws.call("read_file", r#"{"path": "huge.txt"}"#),
        false,
        baseline,
    );
    assert!(
        error.contains("over the 1.0 MiB limit for reading a file whole"),
        "{error}"
    );
    let error = bounded(
        "read_file huge.txt, paged",
        &ws.call(
            "read_file",
            r#"{"path": "huge.txt", "offset": 1, "limit": 1}"#,
        ),
        false,
        baseline,
    );
    assert!(
        error.contains("over the 64.0 MiB limit for paging"),
        "{error}"
    );
    let out = bounded(
        "read_file wide.txt, paged",
        &ws.call(
            "read_file",
            r#"{"path": "wide.txt", "offset": 1, "limit": 1}"#,
        ),
        true,
        baseline,
    );
    assert!(
        out.trim_end().ends_with(&format!(
            "… line 1 is {} bytes long; this page shows bytes 1–1048568 of it \
             (the 1.0 MiB per-call limit); read on with offset=1 column=1048569",
            48 * MIB
        )),
        "{}",
        tail(&out)
    );
    assert!(out.len() < MIB + 1024, "{}", out.len());
}

/// A directory of 200,000 files: listed, found and searched, it costs
/// toolgate no more than a directory of one; the outputs say how many
/// entries were left out. (Before the listings streamed, `find_files` took
/// 74 MB more than a trivial call here, `list_files` 25 MB.)
#[test]
fn a_directory_of_200000_files_costs_no_more_memory_than_a_small_one() {
    const FILES: usize = 200_000;
    let ws = Ws::new();
    let many = ws.root().join("many");
    std::fs::create_dir(&many).unwrap();
    for i in 0..FILES {
        std::fs::File::create(many.join(format!("file_{i:06}.txt"))).unwrap();
    }
    let baseline = ws.baseline();

    let calls = [
        (
            "find_files",
            r#"{"pattern": "*.txt", "path": "many"}"#,
            "… 199000 more files not shown; narrow the pattern or the path",
        ),
        (
            "list_files",
            r#"{"path": "many"}"#,
            "… 198000 more entries not shown; narrow the listing with `path` or `pattern`",
        ),
        (
            "list_files",
            r#"{"path": "many", "recursive": true}"#,
            "… 198000 more entries not shown; narrow the listing with `path` or `pattern`",
        ),
        (
            "grep",
            r#"{"pattern": "needle", "path": "many"}"#,
            "no matches for text `needle` in `many` (200000 files searched)",
        ),
    ];
    for (tool, args, last) in calls {
        let what = format!("{tool} {args}");
        let out = bounded(&what, &ws.call(tool, args), true, baseline);
        let end = out.trim_end().lines().last().unwrap_or_default();
        assert!(end.starts_with(last), "{what}: {end}");
    }
}
