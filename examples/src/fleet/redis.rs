//! The fleet breaker's store for `--breaker fleet`: a private `redis-server`
//! (Debian's package) on a free 127.0.0.1 port, in a temporary directory,
//! persistence off, stopped when dropped. The harness never installs it:
//! when it is missing the error says how.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the server may take to listen.
const START_WITHIN: Duration = Duration::from_secs(10);

/// A running private Redis server, killed when dropped.
pub(crate) struct PrivateRedis {
    port: u16,
    child: Child,
    // Removed after the server is killed (fields drop in order).
    _dir: tempfile::TempDir,
}

impl PrivateRedis {
    /// Starts one and waits until it listens.
    pub(crate) fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let dir = tempfile::tempdir()?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "--breaker fleet starts a private redis-server, which could not run ({e}); \
                     install Debian's package (`apt-get install redis-server`) or use --breaker local"
                )
            })?;
        let mut redis = PrivateRedis {
            port,
            child,
            _dir: dir,
        };
        let since = Instant::now();
        while !redis.listens() {
            if let Ok(Some(status)) = redis.child.try_wait() {
                return Err(
                    format!("redis-server on port {port} exited at start ({status})").into(),
                );
            }
            if since.elapsed() > START_WITHIN {
                return Err(
                    format!("redis-server on port {port} did not listen within 10s").into(),
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(redis)
    }

    /// The URL the clients' fleet breakers connect to.
    pub(crate) fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Whether it accepts connections: with persistence off it has nothing
    /// to load, so it serves from the moment it listens.
    fn listens(&self) -> bool {
        TcpStream::connect(("127.0.0.1", self.port)).is_ok()
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
