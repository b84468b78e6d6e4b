import Posix

#if OFFERTRACK_FAULT_HOOKS
    /// Test hooks of a seal (debug builds only), built by the executable that runs `offertrack seal` (from the
    /// `OFFERTRACK_TEST_SEAL_*` environment variables) or by a test; none by default.
    public struct SealHooks: Sendable {
        public static let killAfterStepVariable = "OFFERTRACK_TEST_SEAL_KILL_AFTER_STEP"
        public static let pauseAfterStepVariable = "OFFERTRACK_TEST_SEAL_PAUSE_AFTER_STEP"
        public static let pauseFileVariable = "OFFERTRACK_TEST_SEAL_PAUSE_FILE"
        public static let usersPerChunkVariable = "OFFERTRACK_TEST_SEAL_USERS_PER_CHUNK"
        public static let rowsPerChunkVariable = "OFFERTRACK_TEST_SEAL_ROWS_PER_CHUNK"

        /// SIGKILL the process after this many committed steps (the horizon, each day, each chunk of rows, each chunk
        /// of users).
        public var killAfterStep: Int?
        /// After this many steps, create `pauseFile` and wait until it is removed.
        public var pauseAfterStep: Int?
        public var pauseFile: String?
        /// Chunks of this many users, and of this many rows, instead of the defaults.
        public var usersPerChunk: Int?
        public var rowsPerChunk: Int?

        public init(
            killAfterStep: Int? = nil, pauseAfterStep: Int? = nil, pauseFile: String? = nil, usersPerChunk: Int? = nil,
            rowsPerChunk: Int? = nil
        ) {
            self.killAfterStep = killAfterStep
            self.pauseAfterStep = pauseAfterStep
            self.pauseFile = pauseFile
            self.usersPerChunk = usersPerChunk
            self.rowsPerChunk = rowsPerChunk
        }

        /// The hooks from `variable` (the executable's environment), by the names above.
        public init(_ variable: (String) -> String?) {
            self.init(
                killAfterStep: variable(Self.killAfterStepVariable).flatMap { Int($0) },
                pauseAfterStep: variable(Self.pauseAfterStepVariable).flatMap { Int($0) },
                pauseFile: variable(Self.pauseFileVariable),
                usersPerChunk: variable(Self.usersPerChunkVariable).flatMap { Int($0) },
                rowsPerChunk: variable(Self.rowsPerChunkVariable).flatMap { Int($0) })
        }

        func afterStep(_ count: Int) {
            if count == killAfterStep {
                FileDescriptor.printError("offertrack: seal test hook: SIGKILL after step \(count)")
                CurrentProcess.killImmediately()
            }
            if count == pauseAfterStep, let pauseFile {
                try? FileSystem.writeAtomically([], to: pauseFile)
                while FileSystem.exists(pauseFile) { Sleep.milliseconds(10) }
            }
        }
    }
#else
    /// A release build has no test hooks.
    public struct SealHooks: Sendable {
        public init() {}
        var usersPerChunk: Int? { nil }
        var rowsPerChunk: Int? { nil }
        func afterStep(_ count: Int) {}
    }
#endif
