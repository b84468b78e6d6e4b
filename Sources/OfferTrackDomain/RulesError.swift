/// Why a commission rules file (SPEC section 5) is malformed.
public struct RulesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The offending key as a path (`currency`, `rules[3].from`, `rules[4]`); nil when the file as a whole is wrong.
    public var path: String?
    /// A human sentence naming the key or the rule's index.
    public var message: String

    public init(path: String?, _ message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { message }

    /// The message with the offending key appended, as operators see it: `… (at rules[3].from)`.
    public var located: String { message + (path.map { " (at \($0))" } ?? "") }
}
