import Foundation

/// Whether this is CI's run (`CI` set, as `.ci/run` sets it). There a test that needs a tool or a privilege
/// `make test` provides fails when it is missing instead of being skipped: a proof that did not run is no proof.
public let runningUnderCI = ProcessInfo.processInfo.environment["CI"] != nil
