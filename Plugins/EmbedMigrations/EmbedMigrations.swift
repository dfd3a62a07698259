import Foundation
import PackagePlugin

/// Compiles every file of the repository's migrations/ into the target, in order of name: adding a migration is
/// adding its file.
@main struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let directory = context.package.directoryURL.appending(path: "migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }.sorted().map { directory.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "Migrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations", executable: try context.tool(named: "embed-migrations").url,
                arguments: [output.path] + files.map(\.path), inputFiles: files, outputFiles: [output])
        ]
    }
}
