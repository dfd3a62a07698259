import HTTPServer
import Testing

@Suite struct RouterTests {
    private func answer(_ name: String) -> Router.Handler {
        { request in
            let parameters = request.pathParameters.sorted { $0.key < $1.key }.map {
                "\($0.key)=\($0.value)"
            }
            let text = ([name, request.route ?? "-"] + parameters).joined(separator: " ")
            return HTTPResponse(status: 200, body: Array(text.utf8))
        }
    }

    private func respond(_ router: Router, _ method: String, _ path: String) -> (Int, String, String?) {
        let response = router.respond(
            to: HTTPRequest(method: method, path: path),
            notFound: { _ in HTTPResponse(status: 404) },
            methodNotAllowed: { _, methods in
                HTTPResponse(status: 405, body: Array(methods.joined(separator: "|").utf8))
            })
        return (
            response.status, String(decoding: response.body, as: UTF8.self), response.headers["Allow"]
        )
    }

    private var router: Router {
        var router = Router()
        router.add("GET", "/v1/offers/{id}", answer("offer"))
        router.add("DELETE", "/v1/offers/{id}", answer("delete"))
        router.add("GET", "/v1/offers/search", answer("search"))
        router.add("GET", "/v1/retailer/offers/{major}/{minor}", answer("pair"))
        router.add("post", "/v1/catalog", answer("catalog"))
        router.add("GET", "/", answer("root"))
        return router
    }

    @Test func parametersAndRouteAreSet() {
        #expect(
            respond(router, "GET", "/v1/retailer/offers/1/2").1
                == "pair /v1/retailer/offers/{major}/{minor} major=1 minor=2")
        #expect(respond(router, "GET", "/v1/offers/77").1 == "offer /v1/offers/{id} id=77")
        #expect(respond(router, "GET", "/").1 == "root /")
    }

    @Test func literalSegmentWinsOverParameter() {
        #expect(respond(router, "GET", "/v1/offers/search").1 == "search /v1/offers/search")
        // The literal route has no DELETE, so the parameter route answers.
        #expect(respond(router, "DELETE", "/v1/offers/search").1 == "delete /v1/offers/{id} id=search")
    }

    /// A path with no parameters is found by one lookup of the path as written, the others through the tree: both
    /// give the same route.
    @Test func aLiteralPathIsRoutedAlikeWrittenExactlyOrNot() {
        for path in ["/v1/offers/search", "/v1/offers/search/", "//v1/offers//search"] {
            #expect(respond(router, "GET", path).1 == "search /v1/offers/search")
            #expect(respond(router, "HEAD", path).1 == "search /v1/offers/search")
            #expect(router.pattern(method: "GET", path: path) == "/v1/offers/search")
            #expect(router.pattern(method: "DELETE", path: path) == "/v1/offers/{id}")
        }
        #expect(router.pattern(method: "PUT", path: "/v1/offers/search") == nil)
        #expect(respond(router, "PUT", "/v1/offers/search").2 == "DELETE, GET")
    }

    @Test func methodsAreCaseInsensitiveAtRegistrationAndHeadFallsBackToGet() {
        #expect(respond(router, "POST", "/v1/catalog").0 == 200)
        #expect(respond(router, "HEAD", "/v1/offers/3").1 == "offer /v1/offers/{id} id=3")
    }

    @Test func unknownPathIsNotFound() {
        #expect(respond(router, "GET", "/v1/offers").0 == 404)
        #expect(respond(router, "GET", "/v1/offers/1/extra").0 == 404)
        #expect(respond(router, "GET", "/v2/catalog").0 == 404)
    }

    @Test func knownPathWithOtherMethodIsMethodNotAllowedWithAllow() {
        let (status, methods, allow) = respond(router, "PUT", "/v1/offers/5")
        #expect(status == 405)
        #expect(methods == "DELETE|GET")
        #expect(allow == "DELETE, GET")
        #expect(respond(router, "GET", "/v1/catalog").2 == "POST")
    }
}
