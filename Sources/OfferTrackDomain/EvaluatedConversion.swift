/// A conversion together with its commission, as reports and exports consume it.
public struct EvaluatedConversion: Sendable, Equatable {
    public var conversion: Conversion
    public var commission: Commission

    public init(conversion: Conversion, commission: Commission) {
        self.conversion = conversion
        self.commission = commission
    }

    /// Evaluates `conversion` under `rules` (rule 4.5).
    public init(_ conversion: Conversion, rules: CommissionRules) {
        self.init(conversion: conversion, commission: Commission.evaluate(conversion, rules: rules))
    }
}
