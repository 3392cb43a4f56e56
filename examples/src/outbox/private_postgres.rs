//! A private PostgreSQL cluster for the demo and the tests: `initdb` in a
//! temporary directory, a server on a free loopback port with its socket in
//! that directory, stopped and removed when dropped (a test that fails
//! stops it too). Never a system service, never another user's cluster.
//!
//! The binaries come from Debian's `postgresql` package
//! (`/usr/lib/postgresql/<version>/bin`). When they are missing and this
//! process is root, it installs the package with apt-get, saying so;
//! otherwise it fails with the command that would. PostgreSQL refuses to
//! run as root, so as root the server runs as the `postgres` user the
//! package creates.

use std::fmt;
use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// Where Debian puts each installed PostgreSQL version's programs.
const DEBIAN_LIBDIR: &str = "/usr/lib/postgresql";

/// The user that runs the server when this process is root.
const SERVER_USER: &str = "postgres";

/// Why the private cluster could not be started, and what would fix it.
///
/// ```
/// let e = examples::outbox::ClusterError::new("initdb failed", "see the log");
/// assert_eq!(e.to_string(), "private PostgreSQL cluster: initdb failed; see the log");
/// ```
#[derive(Debug)]
pub struct ClusterError {
    what: String,
    fix: String,
}

impl ClusterError {
    /// An error saying what went wrong and what to do about it.
    ///
    /// ```
    /// let e = examples::outbox::ClusterError::new("x", "y");
    /// assert!(e.to_string().ends_with("x; y"));
    /// ```
    pub fn new(what: impl Into<String>, fix: impl Into<String>) -> Self {
        ClusterError {
            what: what.into(),
            fix: fix.into(),
        }
    }
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "private PostgreSQL cluster: {}; {}", self.what, self.fix)
    }
}

impl std::error::Error for ClusterError {}

/// A running private cluster; dropping it stops the server and removes its
/// files.
///
/// ```no_run
/// let cluster = examples::outbox::PrivatePostgres::start().unwrap();
/// assert!(cluster.url().starts_with("postgres://postgres@127.0.0.1:"));
/// ```
pub struct PrivatePostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    run_as_server_user: bool,
}

impl PrivatePostgres {
    /// Finds (or installs) PostgreSQL, creates a cluster in a temporary
    /// directory and starts it on a free loopback port.
    ///
    /// ```no_run
    /// let cluster = examples::outbox::PrivatePostgres::start().unwrap();
    /// assert!(cluster.port() > 0);
    /// ```
    pub fn start() -> Result<Self, ClusterError> {
        let bin = binaries()?;
        let run_as_server_user = is_root();
        let dir = tempfile::Builder::new()
            .prefix("outbox-postgres-")
            .tempdir()
            .map_err(|e| {
                ClusterError::new(
                    format!("cannot create a temporary directory: {e}"),
                    "check $TMPDIR",
                )
            })?;
        if run_as_server_user {
            give_to_server_user(dir.path())?;
        }
        let mut cluster = PrivatePostgres {
            dir,
            bin,
            port: 0,
            run_as_server_user,
        };
        cluster.init()?;
        // The port is free when chosen, but another program may take it
        // before the server binds it: then try another.
        let mut last = None;
        for _ in 0..3 {
            cluster.port = free_port()?;
            match cluster.start_server() {
                Ok(()) => return Ok(cluster),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ClusterError::new("the server did not start", "see its log")))
    }

    /// The connection URL (trust authentication, loopback only).
    ///
    /// ```no_run
    /// let cluster = examples::outbox::PrivatePostgres::start().unwrap();
    /// assert!(cluster.url().ends_with("/postgres"));
    /// ```
    pub fn url(&self) -> String {
        format!("postgres://{SERVER_USER}@127.0.0.1:{}/postgres", self.port)
    }

    /// The port the server listens on.
    ///
    /// ```no_run
    /// let cluster = examples::outbox::PrivatePostgres::start().unwrap();
    /// assert!(cluster.url().contains(&cluster.port().to_string()));
    /// ```
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the server abruptly, as a crash would (`pg_ctl stop -m
    /// immediate`: no checkpoint, clients cut off), and starts it again on
    /// the same port; it recovers from its write-ahead log.
    ///
    /// ```no_run
    /// let mut cluster = examples::outbox::PrivatePostgres::start().unwrap();
    /// cluster.crash_and_restart().unwrap();
    /// ```
    pub fn crash_and_restart(&mut self) -> Result<(), ClusterError> {
        self.stop("immediate")?;
        self.start_server()
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// `program` from the PostgreSQL binaries, as the server's user.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.run_as_server_user {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", SERVER_USER, "--"]).arg(path);
            cmd
        } else {
            Command::new(path)
        }
    }

    fn init(&self) -> Result<(), ClusterError> {
        let mut cmd = self.command("initdb");
        cmd.arg("-D")
            .arg(self.data())
            .args(["-U", SERVER_USER, "--auth=trust", "--encoding=UTF8"])
            .args(["--locale=C", "--no-sync"]);
        run(cmd, "initdb").map(drop)
    }

    fn start_server(&self) -> Result<(), ClusterError> {
        // A throwaway cluster: fsync off (commits survive a crash of the
        // server, not of the machine), loopback only, the socket in its
        // own directory.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100",
            self.port,
            self.dir.path().display()
        );
        let mut cmd = self.command("pg_ctl");
        cmd.arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.log())
            .args(["-w", "-t", "60", "-o", &options, "start"]);
        run(cmd, "pg_ctl start").map(drop).map_err(|e| {
            let log = std::fs::read_to_string(self.log()).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            ClusterError::new(e.what, format!("server log:\n{}", tail.join("\n")))
        })
    }

    fn stop(&self, mode: &str) -> Result<(), ClusterError> {
        let mut cmd = self.command("pg_ctl");
        cmd.arg("-D")
            .arg(self.data())
            .args(["-w", "-t", "60", "-m", mode, "stop"]);
        run(cmd, "pg_ctl stop").map(drop)
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        if let Err(e) = self.stop("fast") {
            eprintln!("warning: {e}");
        }
    }
}

/// Runs `cmd` quietly; its output becomes the error when it fails.
fn run(mut cmd: Command, what: &str) -> Result<Output, ClusterError> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| {
        ClusterError::new(
            format!("cannot run {what}: {e}"),
            "is PostgreSQL installed?",
        )
    })?;
    if out.status.success() {
        return Ok(out);
    }
    let said = String::from_utf8_lossy(&out.stderr);
    Err(ClusterError::new(
        format!("{what} failed ({}): {}", out.status, said.trim()),
        "see the message above",
    ))
}

/// Whether this process runs as root (the owner of its own /proc entry).
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The directory holding `initdb` and `pg_ctl`: the newest Debian version,
/// else wherever `PATH` has them; installed first when missing.
fn binaries() -> Result<PathBuf, ClusterError> {
    if let Some(bin) = find_binaries() {
        return Ok(bin);
    }
    install()?;
    find_binaries().ok_or_else(|| {
        ClusterError::new(
            "the postgresql package is installed but initdb is still not found",
            format!("look in {DEBIAN_LIBDIR}/<version>/bin"),
        )
    })
}

fn find_binaries() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_LIBDIR)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
}

/// Installs Debian's `postgresql` package, once per process, when root.
fn install() -> Result<(), ClusterError> {
    static ONCE: Mutex<()> = Mutex::new(());
    let _one_at_a_time = ONCE.lock().unwrap_or_else(|e| e.into_inner());
    if find_binaries().is_some() {
        return Ok(());
    }
    let fix = "install it (as root: apt-get update && apt-get install -y postgresql), \
               or pass --database postgres://USER@HOST:PORT/DB for a server you run";
    if !is_root() {
        return Err(ClusterError::new(
            "PostgreSQL (initdb, pg_ctl) is not installed and this process is not root",
            fix,
        ));
    }
    if !Path::new("/usr/bin/apt-get").is_file() {
        return Err(ClusterError::new(
            "PostgreSQL (initdb, pg_ctl) is not installed and there is no apt-get (not Debian) to install the package postgresql",
            fix,
        ));
    }
    // One line says so; apt-get's own output is shown only if it fails.
    eprintln!(
        "PostgreSQL is not installed: installing Debian's package postgresql (apt-get update && apt-get install -y postgresql)"
    );
    for args in [
        &["-qq", "update"][..],
        &[
            "-qq",
            "install",
            "-y",
            "--no-install-recommends",
            "postgresql",
        ][..],
    ] {
        let mut cmd = Command::new("apt-get");
        cmd.env("DEBIAN_FRONTEND", "noninteractive")
            // Wait for another apt-get (a parallel test, CI) rather than fail.
            .args(["-o", "DPkg::Lock::Timeout=300"])
            .args(args);
        run(cmd, &format!("apt-get {}", args.join(" ")))
            .map_err(|e| ClusterError::new(e.what, fix))?;
    }
    Ok(())
}

/// Hands the cluster's directory to the server's user (it refuses root).
fn give_to_server_user(dir: &Path) -> Result<(), ClusterError> {
    let out = Command::new("id")
        .args(["-u", SERVER_USER])
        .output()
        .map_err(|e| ClusterError::new(format!("cannot run id: {e}"), "is coreutils installed?"))?;
    let uid = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse::<u32>()
        .map_err(|_| {
            ClusterError::new(
                format!("PostgreSQL refuses to run as root and there is no `{SERVER_USER}` user"),
                "reinstall the postgresql package (it creates the user), or run as another user",
            )
        })?;
    std::os::unix::fs::chown(dir, Some(uid), None).map_err(|e| {
        ClusterError::new(
            format!(
                "cannot give {} to the {SERVER_USER} user: {e}",
                dir.display()
            ),
            "set TMPDIR to a directory on a local file system",
        )
    })
}

/// A loopback port nobody listens on now.
fn free_port() -> Result<u16, ClusterError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| {
            ClusterError::new(
                format!("no free loopback port: {e}"),
                "check the network setup",
            )
        })
}
