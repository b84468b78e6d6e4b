import Testing

/// The hostile-client and fault suites: run one at a time, so each attack's latency and memory figures are its own.
@Suite(.serialized) enum UnderAttack {}
