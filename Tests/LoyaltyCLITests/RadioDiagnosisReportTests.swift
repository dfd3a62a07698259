import BeaconRadio
import LoyaltyCLI
import Testing

/// `loyalty doctor`'s text: checks lined up, remedies under them, and the verdict last.
@Suite struct RadioDiagnosisReportTests {
    @Test func checksLineUpAndTheVerdictFollows() {
        let missing = RadioDiagnosis(checks: [
            .init(name: "kernel", status: .ok, detail: "AF_BLUETOOTH"),
            .init(name: "adapters", status: .failed, detail: "none", remedy: "plug one in"),
        ])
        #expect(
            missing.reportLines == [
                "ok      kernel    AF_BLUETOOTH",
                "failed  adapters  none",
                "                  -> plug one in",
                "Beacon monitoring and ranging are not available here; `loyalty scan --replay FILE` still works.",
            ])
        let fine = RadioDiagnosis(checks: [.init(name: "kernel", status: .ok, detail: "AF_BLUETOOTH")])
        #expect(fine.reportLines == ["ok      kernel  AF_BLUETOOTH", "Beacon monitoring and ranging are available."])
    }
}
