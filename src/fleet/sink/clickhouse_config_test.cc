// Copyright 2026 The inferscope Authors. SPDX-License-Identifier: Apache-2.0
#include "src/fleet/sink/clickhouse_config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "src/fleet/query/fleet_query.h"

namespace inferscope::fleet {
namespace {

TEST(ClickHouseUrl, HostPortDatabase) {
  auto t = ParseClickHouseUrl("clickhouse://10.0.0.5:9123/fleet_a");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->http.host, "10.0.0.5");
  EXPECT_EQ(t->http.port, 9123);
  EXPECT_EQ(t->database, "fleet_a");
  EXPECT_EQ(t->ToUrl(), "clickhouse://10.0.0.5:9123/fleet_a");
}

TEST(ClickHouseUrl, Defaults) {
  auto t = ParseClickHouseUrl("clickhouse://ch.local");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->http.port, 8123);
  EXPECT_EQ(t->database, "inferscope");
  auto v6 = ParseClickHouseUrl("clickhouse://[::1]/db");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  EXPECT_EQ(v6->http.host, "::1");
  EXPECT_EQ(v6->http.port, 8123);
  EXPECT_EQ(v6->ToUrl(), "clickhouse://[::1]:8123/db");
}

TEST(ClickHouseUrl, Tls) {
  auto t = ParseClickHouseUrl("clickhouses://ch.example.com/fleet");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->tls);
  EXPECT_EQ(t->http.port, 8443);
  EXPECT_TRUE(t->ca_file.empty());
  EXPECT_FALSE(t->tls_skip_verify);
  EXPECT_EQ(t->ToUrl(), "clickhouses://ch.example.com:8443/fleet");
  auto ca = ParseClickHouseUrl("clickhouses://[::1]:9443/db?ca_file=/etc/ssl/ch ca.pem");
  ASSERT_TRUE(ca.ok()) << ca.status().message();
  EXPECT_EQ(ca->http.host, "::1");
  EXPECT_EQ(ca->http.port, 9443);
  EXPECT_EQ(ca->database, "db");
  EXPECT_EQ(ca->ca_file, "/etc/ssl/ch ca.pem");
  auto skip = ParseClickHouseUrl("clickhouses://h:9443?skip_verify=1&ca_file=/x.pem");
  ASSERT_TRUE(skip.ok()) << skip.status().message();
  EXPECT_TRUE(skip->tls_skip_verify);
  EXPECT_EQ(skip->database, "inferscope");
  EXPECT_FALSE(ParseClickHouseUrl("clickhouse://h/db?ca_file=/x.pem").ok());  // needs TLS
  EXPECT_FALSE(ParseClickHouseUrl("clickhouses://h/db?verify=0").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouses://h/db?ca_file=").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouses://u:p@h/db").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouse://h").value().tls);
}

TEST(ClickHouseUrl, Refused) {
  auto creds = ParseClickHouseUrl("clickhouse://bob:secret@host:8123/db");
  ASSERT_FALSE(creds.ok());
  EXPECT_NE(creds.status().message().find("credentials file"), std::string::npos);
  EXPECT_EQ(creds.status().message().find("secret"), std::string::npos);  // never echoed
  EXPECT_FALSE(ParseClickHouseUrl("http://host:8123/db").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouse://host:8123/db;DROP").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouse://host:99999/db").ok());
  EXPECT_FALSE(ParseClickHouseUrl("clickhouse://").ok());
}

TEST(Credentials, Parse) {
  auto c = ParseCredentials("# fleet writer\nuser = writer\n\npassword =  s3cr=t \n");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->user, "writer");
  EXPECT_EQ(c->password, "s3cr=t");
  auto bad = ParseCredentials("user = a\npasswd = hunter2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos);
  EXPECT_EQ(bad.status().message().find("hunter2"), std::string::npos);
  EXPECT_FALSE(ParseCredentials("password = x\n").ok());  // no user
  EXPECT_FALSE(ParseCredentials("user\n").ok());
}

TEST(Credentials, FileModeChecked) {
  char dir[] = "/tmp/ch_creds_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/creds";
  std::ofstream(path) << "user = w\npassword = p\n";
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  auto open = ReadCredentialsFile(path);
  ASSERT_FALSE(open.ok());
  EXPECT_NE(open.status().message().find("chmod 600"), std::string::npos);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  auto ok = ReadCredentialsFile(path);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->user, "w");
  EXPECT_FALSE(ReadCredentialsFile(std::string(dir) + "/none").ok());
  unlink(path.c_str());
  rmdir(dir);
}

TEST(Labels, Parse) {
  Labels l;
  ASSERT_TRUE(ParseLabel("host=gpu-node-1", &l).ok());
  ASSERT_TRUE(ParseLabel("replica=a=b", &l).ok());
  ASSERT_TRUE(ParseLabel("host=gpu-node-2", &l).ok());  // the last one wins
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0], (std::pair<std::string, std::string>{"host", "gpu-node-2"}));
  EXPECT_EQ(l[1].second, "a=b");
  EXPECT_FALSE(ParseLabel("novalue", &l).ok());
  EXPECT_FALSE(ParseLabel("bad key=x", &l).ok());
  EXPECT_FALSE(ParseLabel("k=a\nb", &l).ok());
}

TEST(TabSeparated, Parse) {
  auto rows = ParseTabSeparated("a\\tb\t1\nc\\\\d\t2\n");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0][0], "a\tb");
  EXPECT_EQ((*rows)[1][0], "c\\d");
  EXPECT_EQ((*rows)[1][1], "2");
  EXPECT_TRUE(ParseTabSeparated("")->empty());
  EXPECT_FALSE(ParseTabSeparated("a\tb\nc\n").ok());  // ragged
  EXPECT_FALSE(ParseTabSeparated("a\\").ok());
  EXPECT_FALSE(ParseTabSeparated("a\\q\n").ok());
  EXPECT_FALSE(ParseTabSeparated("a\tb").ok());  // unterminated
}

TEST(FleetSql, FiltersQuoted) {
  FleetQuery q;
  q.from_ns = 1'000'000'000'000'000'000;
  q.to_ns = q.from_ns + 3600'000'000'000;
  q.hosts = {"a'b"};
  q.labels = {{"replica", "x\\y"}};
  q.group_by = GroupBy::kModel;
  EXPECT_EQ(FleetGroupsSql("db", q).find("FINAL"), std::string::npos);
  q.exact = true;
  const std::string sql = FleetGroupsSql("db", q);
  EXPECT_NE(sql.find("host IN ('a\\'b')"), std::string::npos) << sql;
  EXPECT_NE(sql.find("indexOf(label_keys, 'replica')] = 'x\\\\y'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("SELECT model AS grp"), std::string::npos) << sql;
  EXPECT_NE(sql.find("db.inferscope_windows FINAL"), std::string::npos) << sql;
}

}  // namespace
}  // namespace inferscope::fleet
