import Beacons

extension ScanPower {
    /// The scan options: `high` keeps `active` as asked (the `--active` flag), the others are always passive.
    public func options(active: Bool, filterDuplicates: Bool) -> LEScanOptions {
        LEScanOptions(
            active: self == .high && active, filterDuplicates: filterDuplicates, scanInterval: interval, scanWindow: window)
    }
}
