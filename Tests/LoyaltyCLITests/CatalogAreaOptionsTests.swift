import LoyaltyAPI
import LoyaltyCLI
import Testing

/// `sync --near LAT,LON [--radius-km R]` as typed: the area, or the message for the value refused.
@Suite struct CatalogAreaOptionsTests {
    func problem(near: String?, radius: String?) -> String? {
        do {
            _ = try CatalogArea.fromOptions(near: near, radiusKilometres: radius)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func givenValuesMakeTheArea() throws {
        #expect(try CatalogArea.fromOptions(near: nil, radiusKilometres: nil) == nil)
        #expect(
            try CatalogArea.fromOptions(near: "51.5,-0.1", radiusKilometres: nil)
                == CatalogArea(latitude: 51.5, longitude: -0.1, radiusKilometres: 10))
        #expect(try CatalogArea.fromOptions(near: "51.5,-0.1", radiusKilometres: "2.5")?.radiusKilometres == 2.5)
    }

    @Test func refusedValuesNameTheirOption() {
        #expect(problem(near: nil, radius: "5") == "--radius-km needs --near LAT,LON")
        #expect(problem(near: "51.5", radius: nil) == "--near must be LAT,LON in decimal degrees, e.g. 51.5136,-0.1365")
        #expect(
            problem(near: "51.5,-0.1", radius: "0") == "--radius-km must be a number of kilometres from 0.01 to 20000")
    }
}
