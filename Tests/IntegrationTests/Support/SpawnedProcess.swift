import Posix

/// Children of the tests: `Posix.ChildProcess` (posix_spawn, reaped by pid).
///
/// Foundation's `Process` learns that a child ended when a socket the child inherited closes, then blocks in
/// `waitpid` on one shared thread. `systemd-socket-activate` closes every inherited descriptor, so a daemon
/// launched through it with `Process` looks dead at once, that thread blocks for the daemon's whole life, and
/// every later `Process` in the test run never completes.
typealias SpawnedProcess = ChildProcess
