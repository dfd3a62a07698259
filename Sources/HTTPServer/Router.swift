/// Dispatches requests by method and path pattern. Patterns are split into segments once, at `add`,
/// into a tree walked one path segment at a time; a literal segment is preferred over a `{parameter}`
/// at the same place, so "/v1/offers/search" wins over "/v1/offers/{id}" for "search".
public struct Router: Sendable {
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    private struct Route: Sendable {
        var pattern: String
        /// (segment index, parameter name) for each `{parameter}` of the pattern.
        var parameters: [(index: Int, name: String)]
        var handler: Handler
    }

    private struct Node: Sendable {
        var literals: [Substring: Int] = [:]
        var parameter: Int?
        var routes: [String: Route] = [:]
    }

    /// The tree, root first; children are indices, so copying a Router copies its routes.
    private var nodes = [Node()]
    /// The node of each pattern without parameters, by its path: most requests' paths are found with one lookup,
    /// without splitting them or walking the tree.
    private var literalPaths: [String: Int] = [:]

    public init() {}

    /// Registers `handler` for `method` and `pattern` ("/v1/x/{id}/y"). Registering the same
    /// method and pattern twice is a programming error.
    public mutating func add(_ method: String, _ pattern: String, _ handler: @escaping Handler) {
        var node = 0
        var parameters: [(index: Int, name: String)] = []
        for (index, segment) in Self.segments(of: pattern).enumerated() {
            if segment.first == "{" && segment.last == "}" && segment.count > 2 {
                parameters.append((index, String(segment.dropFirst().dropLast())))
                node = child(of: node, existing: nodes[node].parameter) { $0.parameter = $1 }
            } else {
                node = child(of: node, existing: nodes[node].literals[segment]) {
                    $0.literals[segment] = $1
                }
            }
        }
        let method = method.uppercased()
        precondition(nodes[node].routes[method] == nil, "route \(method) \(pattern) registered twice")
        nodes[node].routes[method] = Route(pattern: pattern, parameters: parameters, handler: handler)
        if parameters.isEmpty { literalPaths[pattern] = node }
    }

    /// Runs the handler registered for the request's method and path, with `pathParameters` and
    /// `route` set. HEAD falls back to GET. An unknown path goes to `notFound`; a known path without
    /// the method goes to `methodNotAllowed` with the allowed methods, and its answer gets an
    /// `Allow` header unless it set one.
    public func respond(
        to request: HTTPRequest, notFound: (HTTPRequest) -> HTTPResponse,
        methodNotAllowed: (HTTPRequest, [String]) -> HTTPResponse
    ) -> HTTPResponse {
        if let node = literalPaths[request.path], let route = route(at: node, method: request.method) {
            var request = request
            request.route = route.pattern
            return route.handler(request)
        }
        let segments = Self.segments(of: request.path)
        var allowed: Set<String> = []
        guard let route = match(segments, from: 0, node: 0, method: request.method, allowed: &allowed)
        else {
            if allowed.isEmpty { return notFound(request) }
            let methods = allowed.sorted()
            var response = methodNotAllowed(request, methods)
            if !response.headers.keys.contains(where: { $0.isHeaderName("allow") }) {
                response.headers["Allow"] = methods.joined(separator: ", ")
            }
            return response
        }
        var request = request
        request.route = route.pattern
        for (index, name) in route.parameters {
            request.pathParameters[name] = String(segments[index])
        }
        return route.handler(request)
    }

    /// The pattern that `respond` would run for `method` and `path`, if any.
    public func pattern(method: String, path: String) -> String? {
        if let node = literalPaths[path], let route = route(at: node, method: method) { return route.pattern }
        var allowed: Set<String> = []
        return match(Self.segments(of: path), from: 0, node: 0, method: method, allowed: &allowed)?.pattern
    }

    /// Split on the bytes: "/" is one byte that never occurs inside another character, and splitting a path into
    /// Characters cost a cheap request more than its routing.
    private static func segments(of path: String) -> [Substring] {
        path.utf8.split(separator: UInt8(ascii: "/")).map(Substring.init)
    }

    private mutating func child(of node: Int, existing: Int?, link: (inout Node, Int) -> Void) -> Int {
        if let existing { return existing }
        nodes.append(Node())
        link(&nodes[node], nodes.count - 1)
        return nodes.count - 1
    }

    /// The route of `node` for `method`; HEAD falls back to GET.
    private func route(at node: Int, method: String) -> Route? {
        nodes[node].routes[method] ?? (method == "HEAD" ? nodes[node].routes["GET"] : nil)
    }

    /// Depth-first, literal before parameter; collects the methods of paths that matched without
    /// the request's method.
    private func match(
        _ segments: [Substring], from depth: Int, node: Int, method: String, allowed: inout Set<String>
    ) -> Route? {
        let current = nodes[node]
        guard depth < segments.count else {
            if let route = route(at: node, method: method) { return route }
            allowed.formUnion(current.routes.keys)
            return nil
        }
        if let literal = current.literals[segments[depth]],
            let route = match(segments, from: depth + 1, node: literal, method: method, allowed: &allowed)
        {
            return route
        }
        if let parameter = current.parameter {
            return match(segments, from: depth + 1, node: parameter, method: method, allowed: &allowed)
        }
        return nil
    }
}
