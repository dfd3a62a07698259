import LoyaltyAPI

extension CatalogArea {
    /// A value given for `sync --near LAT,LON [--radius-km R]` that is refused, saying which option and why.
    public struct InputError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The area from the text of `--near` and `--radius-km` (nil when not given), checked as the server
    /// checks it; nil without `--near`.
    public static func fromOptions(near: String?, radiusKilometres radius: String?) throws(InputError) -> CatalogArea? {
        guard let near else {
            if radius != nil { throw InputError(description: "--radius-km needs --near LAT,LON") }
            return nil
        }
        do throws(ValidationError) {
            return try CatalogArea(near: near, radiusKilometres: radius)
        } catch {
            let option = error.field == "near" ? "--near" : "--radius-km"
            throw InputError(description: "\(option) \(error.message)")
        }
    }
}
