//! A private `redis-server` for tests: Debian's package, on a free loopback
//! port, in a temporary directory, with persistence off. It is stopped when
//! the handle is dropped, which also happens when the test panics (unwinding
//! drops it), so no test leaves a server behind.
//!
//! When `redis-server` is not on the PATH the helper installs Debian's
//! package with apt-get (once per process), so `cargo test` on a fresh
//! machine runs these tests instead of skipping them.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a server may take to answer its first PING.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// A running private Redis server.
pub struct RedisServer {
    port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server on a free 127.0.0.1 port and waits until it answers PING.
    pub fn start() -> RedisServer {
        let port = free_port();
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        let mut server = RedisServer {
            port,
            dir,
            child: None,
        };
        server.restart();
        server
    }

    /// The URL a client connects to.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The port the server listens on (kept across [`RedisServer::restart`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL, as a crash would) and waits for it to exit.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port (after [`RedisServer::kill`]).
    pub fn restart(&mut self) {
        self.kill();
        let binary = redis_server_binary();
        let child = Command::new(binary)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        self.child = Some(child);
        let since = Instant::now();
        while !self.answers_ping() {
            assert!(
                since.elapsed() < START_TIMEOUT,
                "redis-server on port {} did not answer PING within {START_TIMEOUT:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Sends one inline command (words separated by spaces) and returns the
    /// first line of the reply, e.g. `":1"` for an integer.
    pub fn command(&self, line: &str) -> String {
        let mut stream =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis-server");
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .expect("a read timeout");
        stream
            .write_all(format!("{line}\r\n").as_bytes())
            .expect("send");
        let mut reply = Vec::new();
        let mut byte = [0u8; 1];
        while stream.read_exact(&mut byte).is_ok() && byte[0] != b'\n' {
            reply.push(byte[0]);
        }
        String::from_utf8_lossy(&reply).trim_end().to_owned()
    }

    /// Whether the server answers PING with PONG.
    pub fn answers_ping(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port nothing listens on now (the OS picks it; a race with another
/// process taking it in between shows up as a failed start, not a hang).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port");
    listener.local_addr().expect("its address").port()
}

/// `redis-server`, installed from Debian's package when missing: as root,
/// with apt-get, saying so in one line. Otherwise (not root, or no apt-get)
/// the tests fail with one message naming the package and the command.
fn redis_server_binary() -> &'static str {
    static FOUND: OnceLock<()> = OnceLock::new();
    FOUND.get_or_init(|| {
        if on_path("redis-server") {
            return;
        }
        if let Some(why) = cannot_install(is_root(), on_path("apt-get")) {
            panic!("{why}");
        }
        eprintln!("redis-server is missing: installing Debian's package redis-server with apt-get");
        let out = Command::new("sh")
            .args([
                "-c",
                "apt-get update -qq && apt-get install -y -qq redis-server",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output();
        let said = out.as_ref().map_or_else(
            |e| e.to_string(),
            |o| String::from_utf8_lossy(&o.stderr).trim().to_owned(),
        );
        assert!(
            out.is_ok_and(|o| o.status.success()) && on_path("redis-server"),
            "redis-server is missing and apt-get could not install it ({said}): \
             install Debian's package with `apt-get install -y redis-server`"
        );
    });
    "redis-server"
}

/// Why the tests cannot install `redis-server` here (`None`: they can, as
/// root with apt-get): one message naming the package and the command.
pub fn cannot_install(root: bool, apt_get: bool) -> Option<String> {
    let why = match (root, apt_get) {
        (true, true) => return None,
        (_, false) => "there is no apt-get here (the tests install Debian's package)",
        (false, true) => "the tests install it with apt-get only when run as root",
    };
    Some(format!(
        "redis-server is missing and {why}: install the package redis-server \
         (`sudo apt-get install -y redis-server` on Debian), or put a redis-server on the PATH"
    ))
}

/// Whether this process runs as root.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn on_path(binary: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {binary}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
