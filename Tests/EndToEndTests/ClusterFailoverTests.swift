import Foundation
import LoyaltyTesting
import Postgres
import Testing

@Suite(.serialized) struct ClusterFailoverTests {
    @Test func harnessBoots() throws {
        let started = Date()
        let cluster = try PatroniCluster()
        defer { cluster.stop() }
        print("booted in \(Date().timeIntervalSince(started)) s, leader \(cluster.leader()?.name ?? "-")")
        let url = try cluster.createDatabase("smoke")
        let connection = try PostgresConnection(conninfo: url)
        print(try connection.query("SELECT 1 AS one").count)
        let leader = try #require(cluster.leader())
        let killedAt = Date()
        cluster.signal(leader, SIGKILL)
        let next = try cluster.waitForLeader(other: leader)
        print("new leader \(next.name) after \(Date().timeIntervalSince(killedAt)) s")
    }
}
