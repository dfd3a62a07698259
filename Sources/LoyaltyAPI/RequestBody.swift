/// A JSON body a client sends. The server rejects keys outside `CodingKeys` (a misspelt optional
/// field would otherwise be silently dropped) and then applies `validate()`.
public protocol RequestBody: Codable, Sendable {
    associatedtype CodingKeys: CodingKey & CaseIterable
    func validate() throws(ValidationError)
}

extension RequestBody {
    public static var fieldNames: Set<String> { Set(CodingKeys.allCases.map(\.stringValue)) }
}
