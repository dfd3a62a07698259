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

        // Wrappers: the only code that touches each C library.
        .target(name: "BeaconRadio", dependencies: ["Beacons", "CBlueZ", "DBus"]),
        // libdbus: the system bus, for BlueZ's API when bluetoothd manages the adapter, and the session bus, for
        // desktop notifications.
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(name: "Postgres", dependencies: ["CLibPQ", "CivilCalendar"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),
        .target(name: "HTTPClient", dependencies: ["CCurl"]),
        .target(name: "SQLite", dependencies: ["CSQLite3"]),
        .target(name: "QRCode", dependencies: ["CQREncode"]),
        // libcrypto: SHA-256 of the secrets kept as digests.
        .target(name: "Digest", dependencies: ["CCrypto"]),

        // Pure Swift: day counts of the Gregorian calendar, for hand-written timestamp coding.
        .target(name: "CivilCalendar"),

        // Pure Swift: both executables' commands, options and positionals, parsed from their declarations.
        .target(name: "Arguments"),

        // Pure Swift: bytes in, beacon events out.
        .target(name: "Beacons"),
        // Pure Swift: great-circle geometry, NMEA 0183, geographic region monitoring.
        .target(name: "Geofencing"),

        // The product.
        .target(name: "LoyaltyAPI", dependencies: ["CivilCalendar"]),
        .target(
            name: "LoyaltyServer",
            dependencies: ["Arguments", "Digest", "LoyaltyAPI", "Geofencing", "Postgres", "HTTPServer"],
            // Symlinks to the repository's schema.sql and openapi.yaml, compiled into the binary; migrations/ is
            // compiled in by EmbedMigrations.
            resources: [
                .embedInCode("Resources/schema.sql"), .embedInCode("Resources/openapi.yaml"),
                // The retailer's web console (ConsoleFiles.swift).
                .embedInCode("Resources/console.html"), .embedInCode("Resources/console.js"),
                .embedInCode("Resources/console.css"), .embedInCode("Resources/favicon.svg"),
            ],
            plugins: ["EmbedMigrations"]),
        // Every file of migrations/, compiled into LoyaltyServer at build time.
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["embed-migrations"]),
        .executableTarget(name: "embed-migrations"),
        .target(name: "LoyaltyClient", dependencies: ["LoyaltyAPI", "Beacons", "Geofencing", "HTTPClient", "SQLite"]),
        // Flags and environment variables in, a `ServerConfiguration` out, and the server run until a signal.
        .executableTarget(
            name: "loyalty-server", dependencies: ["Arguments", "HTTPServer", "LoyaltyAPI", "LoyaltyServer", "Postgres"]),
        // The `loyalty` command tree and everything it prints: commands, the terminal, text and JSON lines.
        .target(
            name: "LoyaltyCLI",
            dependencies: [
                "Arguments", "Beacons", "BeaconRadio", "DBus", "Geofencing", "LoyaltyAPI", "LoyaltyClient", "QRCode",
            ]),
        .executableTarget(name: "loyalty", dependencies: ["Arguments", "LoyaltyCLI"], path: "cli"),

        // Test-only: the server in process and over a socket, throwaway clusters, PgBouncer, the guest-kernel
        // radio harness (GuestRadio/). Never a dependency of `loyalty` or `loyalty-server`.
        .target(
            name: "LoyaltyTesting",
            dependencies: ["LoyaltyServer", "LoyaltyAPI", "Postgres", "HTTPServer", "HTTPClient", "DBus"]),
        .executableTarget(
            name: "loyalty-bench",
            dependencies: [
                "Beacons", "Geofencing", "HTTPServer", "LoyaltyAPI", "LoyaltyServer", "LoyaltyTesting", "Postgres",
            ],
            path: "Benchmarks/loyalty-bench"),

        .testTarget(name: "ArgumentsTests", dependencies: ["Arguments"]),
        .testTarget(name: "BeaconsTests", dependencies: ["Beacons"]),
        .testTarget(name: "GeofencingTests", dependencies: ["Geofencing", "Beacons"]),
        .testTarget(name: "BeaconRadioTests", dependencies: ["BeaconRadio", "Beacons", "DBus", "LoyaltyTesting"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "LoyaltyTesting"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient", "HTTPServer"]),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"]),
        .testTarget(name: "LoyaltyAPITests", dependencies: ["LoyaltyAPI"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"]),
        .testTarget(name: "DigestTests", dependencies: ["Digest"]),
        .testTarget(
            name: "LoyaltyServerTests",
            dependencies: [
                "Arguments", "LoyaltyServer", "LoyaltyAPI", "LoyaltyTesting", "Postgres", "HTTPServer", "HTTPClient",
                "loyalty-server",
            ]),
        .testTarget(
            name: "LoyaltyClientTests",
            dependencies: ["LoyaltyClient", "LoyaltyAPI", "Beacons", "LoyaltyTesting"]),
        .testTarget(
            name: "LoyaltyCLITests",
            dependencies: ["LoyaltyCLI", "LoyaltyClient", "LoyaltyAPI", "Beacons", "Arguments", "LoyaltyTesting"]),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Beacons", "DBus", "Geofencing", "HTTPClient", "HTTPServer", "LoyaltyTesting", "Postgres"]),
    ]
)
