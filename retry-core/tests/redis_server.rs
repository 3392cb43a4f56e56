//! The private Redis server the fleet-budget tests use: it starts on a free
//! port, answers PING, survives a kill and restart on the same port, and is
//! gone once dropped (also when a test panics).

mod support;

use support::redis_server::RedisServer;

#[test]
fn a_private_server_answers_and_is_stopped_on_drop() {
    let server = RedisServer::start();
    assert!(server.answers_ping());
    assert!(server.url().starts_with("redis://127.0.0.1:"));
    let port = server.port();
    drop(server);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn a_killed_server_restarts_on_the_same_port() {
    let mut server = RedisServer::start();
    let port = server.port();
    server.kill();
    assert!(!server.answers_ping());
    server.restart();
    assert_eq!(server.port(), port);
    assert!(server.answers_ping());
}

#[test]
fn a_panicking_test_does_not_leave_its_server_running() {
    let port = std::panic::catch_unwind(|| {
        let server = RedisServer::start();
        let port = server.port();
        std::panic::panic_any(port);
    })
    .unwrap_err();
    let port = *port.downcast::<u16>().unwrap();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// Issue 31: where the tests cannot install redis-server they say so in one
/// message naming the package and the command, instead of trying apt-get.
#[test]
fn without_root_or_apt_get_the_failure_names_the_package_and_the_command() {
    use support::redis_server::cannot_install;
    assert_eq!(cannot_install(true, true), None);
    for (root, apt_get, why) in [(false, true, "as root"), (true, false, "no apt-get")] {
        let text = cannot_install(root, apt_get).unwrap();
        assert!(text.contains(why), "{text}");
        assert!(text.contains("the package redis-server"), "{text}");
        assert!(
            text.contains("`sudo apt-get install -y redis-server`"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1, "{text}");
    }
}
