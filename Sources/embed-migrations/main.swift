import Foundation

// embed-migrations OUTPUT FILE...: writes OUTPUT, a Swift file defining `Documents.migrationFiles`, each FILE's
// name and bytes in the order given (the EmbedMigrations plugin's).
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-migrations OUTPUT FILE...\n".utf8))
    exit(64)
}
var source = "// Made by the EmbedMigrations plugin from migrations/.\nextension Documents {\n"
source += "    static let migrationFiles: [(name: String, sql: [UInt8])] = [\n"
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    let bytes = try [UInt8](Data(contentsOf: url))
    source += "        (\"\(url.lastPathComponent)\", [\(bytes.map(String.init).joined(separator: ","))]),\n"
}
source += "    ]\n}\n"
try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
