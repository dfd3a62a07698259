import BeaconRadio
import Foundation
import Testing

@Suite struct RadioAccessTests {
    @Test func capabilitiesFromProcStatus() throws {
        let both = try #require(ProcessCapabilities(procStatus: "Name:\tloyalty\nCapEff:\t0000000000003000\n"))
        #expect(both.missingForRadio.isEmpty)
        let rawOnly = try #require(ProcessCapabilities(procStatus: "CapInh:\t0\nCapEff:\t0000000000002000"))
        #expect(rawOnly.missingForRadio == [.netAdmin])
        #expect(ProcessCapabilities(procStatus: "CapEff:\t0")?.missingForRadio == [.netRaw, .netAdmin])
        #expect(ProcessCapabilities(procStatus: "Name:\tloyalty\n") == nil)
        #expect(ProcessCapabilities(procStatus: "CapEff:\tnot-hex") == nil)
        #expect(ProcessCapabilities.current() != nil, "this is Linux with /proc")
    }

    @Test func errnoMeansSomethingToTheUser() {
        let none = ProcessCapabilities(effective: 0)
        #expect(
            RadioError(errno: EAFNOSUPPORT, call: "socket", adapter: "hci0", capabilities: none)
                == .bluetoothUnavailableInKernel)
        #expect(
            RadioError(errno: EPERM, call: "write", adapter: "hci0", capabilities: none)
                == .missingCapabilities([.netRaw, .netAdmin]))
        #expect(
            RadioError(
                errno: EACCES, call: "write", adapter: "hci0", capabilities: ProcessCapabilities(effective: 1 << 13))
                == .missingCapabilities([.netAdmin]))
        #expect(RadioError(errno: ENETDOWN, call: "write", adapter: "hci1", capabilities: none) == .adapterDown("hci1"))
        #expect(
            RadioError(errno: ERFKILL, call: "write", adapter: "hci0", capabilities: none) == .adapterBlocked("hci0"))
        #expect(
            RadioError(errno: EIO, call: "read", adapter: "hci0", capabilities: none)
                == .system(call: "read", errno: EIO))
    }

    @Test func messagesSayWhatToDo() {
        let missing = RadioError.missingCapabilities([.netAdmin]).description
        #expect(missing.contains("lacks CAP_NET_ADMIN"))
        #expect(!missing.contains("lacks CAP_NET_RAW"))
        #expect(missing.contains("sudo setcap 'cap_net_raw,cap_net_admin+ep' \"$(command -v loyalty)\""))
        #expect(RadioError.bluetoothUnavailableInKernel.description.contains("not available in this kernel"))
        #expect(RadioError.bluetoothUnavailableInKernel.description.contains("--replay"))
        #expect(RadioError.noAdapter.description.contains("--replay"))
        #expect(RadioError.adapterDown("hci0").description.contains("power on"))
    }

    /// This machine may or may not have Bluetooth; the scanner and the diagnosis must agree on why a
    /// live scan cannot start, and say so with the typed error (never a crash).
    @Test func theLiveScanFailsForTheReasonTheDiagnosisGives() throws {
        let diagnosis = RadioDiagnosis.examine()
        let kernel = try #require(diagnosis.checks.first { $0.name == "kernel" })
        let adapter = try #require(diagnosis.checks.first { $0.name == "adapter" })
        do {
            let scanner = try LEScanner()
            #expect(
                diagnosis.isRangingAvailable, "opened \(scanner.adapter), yet the diagnosis says \(diagnosis.checks)")
        } catch {
            if kernel.status == .failed {
                #expect(error == .bluetoothUnavailableInKernel)
                #expect(error.description.contains("--replay"))
            } else if adapter.status == .failed && adapter.detail == "no Bluetooth adapter found" {
                #expect(error == .noAdapter)
            } else {
                #expect(!diagnosis.isRangingAvailable, "\(error)")
            }
        }
        #expect(throws: RadioError.self) { try LEScanner(transport: .kernel("hci99")) }
    }

    @Test func theDiagnosisExplainsEveryProblem() throws {
        let diagnosis = RadioDiagnosis.examine()
        #expect(diagnosis.checks.map(\.name) == ["kernel", "adapter", "capabilities", "le-features"])
        for check in diagnosis.checks where check.status == .failed || check.status == .warning {
            #expect(check.remedy?.isEmpty == false, "\(check.name) says what to do")
        }
        if diagnosis.checks[0].status == .failed {
            #expect(diagnosis.checks[1].status == .skipped)
            #expect(diagnosis.checks[3].status == .skipped)
            #expect(!diagnosis.isMonitoringAvailable && !diagnosis.isRangingAvailable)
        }
        let capabilities = try #require(ProcessCapabilities.current())
        #expect((diagnosis.checks[2].status == .ok) == capabilities.missingForRadio.isEmpty)
    }
}
