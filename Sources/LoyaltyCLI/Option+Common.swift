import Arguments
import Foundation
import LoyaltyAPI

/// Options several commands declare alike, checked as they are parsed.
extension Option<Double> {
    /// `--name SECONDS`: a number of seconds greater than zero.
    static func seconds(_ name: String, help: String) -> Option<Double> {
        Option(name, value: "SECONDS", help: help, expected: "a number of seconds greater than 0", parse: positiveSeconds)
    }

    /// A number of seconds greater than zero (`--timeout`, `config set total_timeout_s`), or nil.
    @Sendable static func positiveSeconds(_ text: String) -> Double? {
        Double(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }
}

extension Option<UUID> {
    /// `--name UUID`: a proximity UUID, that `check` may refuse too.
    static func uuid(
        _ name: String, help: String, required: Bool = false,
        check: @escaping @Sendable (UUID) throws(InvalidValue) -> Void = { _ in }
    ) -> Option<UUID> {
        Option(name, value: "UUID", help: help, required: required) { text in
            guard let uuid = UUID(uuidString: text) else { throw InvalidValue("not a UUID; expected 8-4-4-4-12 hex digits") }
            try check(uuid)
            return uuid
        }
    }
}

extension InvalidValue {
    /// What `rule` returns; its refusal (a rule the server checks too) is the reason the value is refused,
    /// so the parser says `--name: MESSAGE` before anything is sent.
    static func checking<Value>(_ rule: () throws(ValidationError) -> Value) throws(InvalidValue) -> Value {
        do throws(ValidationError) { return try rule() } catch { throw InvalidValue(error.message) }
    }
}
