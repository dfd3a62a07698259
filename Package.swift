// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "loyalty",
    products: [
        .executable(name: "loyalty", targets: ["loyalty"]),
        .executable(name: "loyalty-server", targets: ["loyalty-server"]),
    ],
    targets: [
        // C libraries. Each is imported by exactly one wrapper module below.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // Wrappers: the only code that touches each C library.
        .target(name: "BeaconRadio", dependencies: ["Beacons", "CBlueZ", "DBus", "SystemCalls"]),
        // libdbus: the system bus, for BlueZ's API when bluetoothd manages the adapter, and the session bus, for
        // desktop notifications.
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(name: "Postgres", dependencies: ["CLibPQ", "CivilCalendar", "SystemCalls"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Compression", "SystemCalls"]),
        .target(name: "HTTPClient", dependencies: ["CCurl"]),
        .target(name: "SQLite", dependencies: ["CSQLite3"]),
        .target(name: "QRCode", dependencies: ["CQREncode"]),
        // zlib: gzip for the server's answers (libcurl decodes them itself on the client).
        .target(name: "Compression", dependencies: ["CZlib"]),
        // libcrypto: SHA-256 of the secrets kept as digests.
        .target(name: "Digest", dependencies: ["CCrypto"]),

        // Pure Swift: day counts of the Gregorian calendar, for hand-written timestamp coding.
        .target(name: "CivilCalendar"),

        // write(2) to the end, temporary directories, errno's text: the system calls every layer makes the same way.
        .target(name: "SystemCalls"),

        // Pure Swift: the hand-written JSON coder (table-driven objects, ordered lines, ISO 8601 dates) and the
        // wire's Foundation coders. Cross-module optimisation lets the wire types' tables inline its writer and
        // reader, as they did when both lived in one module.
        .target(
            name: "JSONCoding", dependencies: ["CivilCalendar"],
            swiftSettings: [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]),

        // Pure Swift: both executables' commands, options and positionals, parsed from their declarations.
        .target(name: "Arguments"),

        // Pure Swift: bytes in, beacon events out.
        .target(name: "Beacons", dependencies: ["SystemCalls"]),
        // Test- and bench-only: the large synthetic capture, the proximity trials and the reference RSSI filters they
        // are compared with. Never a dependency of `loyalty` or `loyalty-server`.
        .target(name: "BeaconsTesting", dependencies: ["Beacons"]),
        // Pure Swift: great-circle geometry, NMEA 0183, geographic region monitoring.
        .target(name: "Geofencing"),

        // The product.
        .target(name: "LoyaltyAPI", dependencies: ["JSONCoding"]),
        .target(
            name: "LoyaltyServer",
            dependencies: [
                "Arguments", "Digest", "JSONCoding", "LoyaltyAPI", "Geofencing", "Postgres", "HTTPServer", "SystemCalls",
            ],
            // Symlinks to the repository's schema.sql and openapi.yaml, compiled into the binary; migrations/ is
            // compiled in by EmbedMigrations.
            resources: [
                .embedInCode("Resources/schema.sql"), .embedInCode("Resources/openapi.yaml"),
                // The retailer's web console (ConsoleFiles.swift).
                .embedInCode("Resources/console.html"), .embedInCode("Resources/console.js"),
                .embedInCode("Resources/console.css"), .embedInCode("Resources/favicon.svg"),
                // Unicode's confusable prototypes (UTS #39) for retailer names, made by scripts/confusables.py.
                .embedInCode("Resources/confusables.txt"),
            ],
            plugins: ["EmbedMigrations"]),
        // Every file of migrations/, compiled into LoyaltyServer at build time.
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"]),
        .executableTarget(name: "embed-migrations"),
        .target(
            name: "LoyaltyClient",
            dependencies: ["JSONCoding", "LoyaltyAPI", "Beacons", "Geofencing", "HTTPClient", "SQLite", "SystemCalls"]),
        // Flags and environment variables in, a `ServerConfiguration` out, and the server run until a signal.
        .executableTarget(
            name: "loyalty-server", dependencies: ["Arguments", "HTTPServer", "LoyaltyAPI", "LoyaltyServer", "Postgres"]),
        // The `loyalty` command tree and everything it prints: commands, the terminal, text and JSON lines.
        .target(
            name: "LoyaltyCLI",
            dependencies: [
                "Arguments", "Beacons", "BeaconRadio", "DBus", "Digest", "Geofencing", "JSONCoding", "LoyaltyAPI",
                "LoyaltyClient", "QRCode", "SystemCalls",
            ]),
        .executableTarget(name: "loyalty", dependencies: ["Arguments", "LoyaltyCLI"], path: "cli"),

        // Test-only: the server in process and over a socket, throwaway clusters, PgBouncer, the guest-kernel
        // radio harness (GuestRadio/). Never a dependency of `loyalty` or `loyalty-server`.
        .target(
            name: "LoyaltyTesting",
            dependencies: [
                "LoyaltyServer", "JSONCoding", "LoyaltyAPI", "Postgres", "HTTPServer", "HTTPClient", "DBus", "SystemCalls",
            ]),
        .executableTarget(
            name: "loyalty-bench",
            dependencies: [
                "Beacons", "BeaconsTesting", "Digest", "Geofencing", "HTTPServer", "JSONCoding", "LoyaltyAPI",
                "LoyaltyServer", "LoyaltyTesting", "Postgres",
            ],
            path: "Benchmarks/loyalty-bench"),

        .testTarget(name: "ArgumentsTests", dependencies: ["Arguments"]),
        .testTarget(name: "BeaconsTests", dependencies: ["Beacons", "BeaconsTesting"]),
        .testTarget(name: "GeofencingTests", dependencies: ["Geofencing", "Beacons"]),
        .testTarget(name: "BeaconRadioTests", dependencies: ["BeaconRadio", "Beacons", "DBus", "LoyaltyTesting"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "LoyaltyTesting"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["Compression", "HTTPServer", "SystemCalls"]),
        .testTarget(name: "CompressionTests", dependencies: ["Compression"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["Compression", "HTTPClient", "HTTPServer"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "JSONCodingTests", dependencies: ["JSONCoding", "Beacons"]),
        .testTarget(name: "LoyaltyAPITests", dependencies: ["JSONCoding", "LoyaltyAPI"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
        .testTarget(name: "DigestTests", dependencies: ["Digest"]),
        .testTarget(
            name: "LoyaltyServerTests",
            dependencies: [
                "Arguments", "JSONCoding", "LoyaltyServer", "LoyaltyAPI", "LoyaltyTesting", "Postgres", "HTTPServer",
                "HTTPClient", "SystemCalls", "loyalty-server",
            ]),
        .testTarget(
            name: "LoyaltyClientTests",
            dependencies: [
                "JSONCoding", "LoyaltyClient", "LoyaltyAPI", "Beacons", "BeaconsTesting", "Digest", "LoyaltyTesting",
            ]),
        .testTarget(
            name: "LoyaltyCLITests",
            dependencies: [
                "LoyaltyCLI", "LoyaltyClient", "JSONCoding", "LoyaltyAPI", "Beacons", "Arguments", "LoyaltyTesting",
            ]),
        // The real binaries, by what they need beyond them, so that one kind runs alone (`--filter ClusterTests`):
        // the guest kernel's radio or Root-Canal; a Patroni cluster, standbys, PgBouncer or a balancer; `make install`
        // and the make targets; a pseudo-terminal, a session bus or an X server. EndToEndTests holds the rest.
        .testTarget(name: "RadioGuestTests", dependencies: ["LoyaltyTesting"]),
        .testTarget(name: "ClusterTests", dependencies: ["HTTPClient", "HTTPServer", "LoyaltyTesting", "Postgres"]),
        .testTarget(name: "InstallTests", dependencies: ["LoyaltyTesting"]),
        .testTarget(name: "TerminalTests", dependencies: ["Beacons", "DBus", "Geofencing", "LoyaltyTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "Beacons", "BeaconsTesting", "Digest", "Geofencing", "HTTPClient", "HTTPServer", "LoyaltyAPI",
                "LoyaltyTesting", "Postgres", "SQLite",
            ]),
    ]
)
