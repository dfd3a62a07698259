/// A JSON body a client sends. The server rejects keys outside `CodingKeys` (a misspelt optional
/// field would otherwise be silently dropped) and then applies `validate()`.
public protocol RequestBody: Codable, Sendable {
    associatedtype CodingKeys: CodingKey & CaseIterable
    /// For fields holding arrays of objects: the keys those objects may have.
    static var elementFieldNames: [String: Set<String>] { get }
    func validate() throws(ValidationError)
}

extension RequestBody {
    public static var fieldNames: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)) }
    public static var elementFieldNames: [String: Set<String>] { [:] }
}
