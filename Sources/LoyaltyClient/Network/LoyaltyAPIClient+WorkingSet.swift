import Foundation
import HTTPClient
import LoyaltyAPI

// The directory and the parts of the catalog a working set is fetched by.

extension LoyaltyAPIClient {
    /// What `GET /v1/directory` answered.
    public enum DirectoryAnswer: Sendable {
        case directory(RetailerDirectory, etag: String?)
        /// 304: nothing in the catalog changed since the ETag.
        case notModified
    }

    public func directory(etag: String?, _ credential: Credential) throws(ClientError) -> DirectoryAnswer {
        let response = try exchange(
            "GET", "/v1/directory", credential: credential, headers: etag.map { ["If-None-Match": $0] } ?? [:],
            accepting: [304], maximumResponseBytes: RetailerDirectory.maximumBytes)
        if response.status == 304 { return .notModified }
        return .directory(try decode(RetailerDirectory.self, response), etag: response.header("ETag"))
    }

    /// Which retailers' rows to fetch.
    public enum CatalogPart: Sendable, Equatable {
        /// By id: the retailers near the device and those its shopper follows.
        case retailers([UUID])
        /// Every retailer of a bucket: a UUID the scan heard, without saying which.
        case bucket(Int, of: Int)
    }

    /// One page of some retailers' rows: the whole of them without `since`, their changes after it with.
    public func catalog(
        _ part: CatalogPart, since cursor: String?, etag: String?, _ credential: Credential
    ) throws(ClientError) -> CatalogAnswer {
        var query: [String: String]
        switch part {
        case .retailers(let ids): query = ["retailers": ids.map(\.uuidString).joined(separator: ",")]
        case .bucket(let bucket, let buckets): query = ["bucket": String(bucket), "buckets": String(buckets)]
        }
        var headers: [String: String] = [:]
        if let cursor {
            query["since"] = cursor
            if let etag { headers["If-None-Match"] = etag }
        }
        // A part's page, a bucket's too, is cut at a page's rows like any other: bounded like any other.
        return try catalogAnswer(
            exchange(
                "GET", "/v1/catalog", query: query, credential: credential, headers: headers, accepting: [304, 410],
                maximumResponseBytes: CatalogPage.maximumJSONBytes(rows: CatalogPage.maximumRows)))
    }
}
