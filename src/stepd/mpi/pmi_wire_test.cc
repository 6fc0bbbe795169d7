#include "stepd/mpi/pmi_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace loom::stepd {
namespace {

TEST(PmiDecoder, Pmi1LinesThenPmi2CommandsAfterTheSwitch) {
  PmiDecoder d;
  d.Append("cmd=init pmi_version=2 pmi_subversion=0\n");
  auto first = d.Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->cmd, "init");
  EXPECT_EQ((*first)->Arg("pmi_version"), "2");
  // The client waits for the answer to init before it speaks PMI-2.
  d.SwitchToV2();
  EXPECT_TRUE(d.v2());
  const std::string put = FormatPmi2("kvs-put", {{"key", "a;b"}, {"value", "x=1;y"}});
  EXPECT_EQ(put, "    34cmd=kvs-put;key=a;;b;value=x=1;;y;");
  d.Append(put.substr(0, 10));
  auto partial = d.Next();
  ASSERT_TRUE(partial.ok());
  EXPECT_FALSE(partial->has_value());
  d.Append(put.substr(10));
  auto whole = d.Next();
  ASSERT_TRUE(whole.ok() && whole->has_value()) << whole.status();
  EXPECT_EQ((*whole)->cmd, "kvs-put");
  EXPECT_EQ((*whole)->Arg("key"), "a;b");  // ';' doubled on the wire, single again here
  EXPECT_EQ((*whole)->Arg("value"), "x=1;y");
}

TEST(PmiDecoder, GarbageIsAnErrorNotAHang) {
  PmiDecoder v1;
  v1.Append("hello\n");
  EXPECT_FALSE(v1.Next().ok());
  PmiDecoder v2;
  v2.SwitchToV2();
  v2.Append("abcdefcmd=x;");
  EXPECT_FALSE(v2.Next().ok());
}

TEST(PmiWire, Pmi1Answers) {
  EXPECT_EQ(FormatPmi1("get_result", {{"rc", "0"}, {"value", "v"}}),
            "cmd=get_result rc=0 value=v\n");
}

TEST(ProcessMapping, BlockAndCyclicLayouts) {
  // 2 nodes x 4 ranks, block: ranks 0-3 on node 0, 4-7 on node 1.
  EXPECT_EQ(ProcessMapping({{0, 1, 2, 3}, {4, 5, 6, 7}}), "(vector,(0,2,4))");
  // Cyclic: one rank at a time, round the nodes.
  EXPECT_EQ(ProcessMapping({{0, 2}, {1, 3}}), "(vector,(0,2,1),(0,2,1))");
  // Uneven: 3 on the first node, 1 on the second.
  EXPECT_EQ(ProcessMapping({{0, 1, 2}, {3}}), "(vector,(0,1,3),(1,1,1))");
}

TEST(Pairs, RoundTripAcrossConcatenatedPieces) {
  std::string bytes;
  AppendPairs({{"a", "1"}, {"b", std::string("\0x", 2)}}, &bytes);
  AppendPairs({{"c", ""}}, &bytes);
  std::map<std::string, std::string> out;
  ASSERT_TRUE(ReadPairs(bytes, &out).ok());
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(out["b"], std::string("\0x", 2));
  EXPECT_FALSE(ReadPairs(bytes.substr(0, bytes.size() - 1), &out).ok());
}

}  // namespace
}  // namespace loom::stepd
