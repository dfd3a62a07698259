import Foundation

/// The checkout the tests were built from, found from this file's path: the shipped files (deploy/, scripts/,
/// migrations/) and the tests' own (Tests/GuestRadio, Tests/Browser) are read from it.
public enum Repository {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
