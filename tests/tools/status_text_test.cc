// SPDX-License-Identifier: Apache-2.0
// status_text_test.cc - the tools' one-line causes for issue 32: a silent
// peer (SoftNdkQueryPeerActivity) and a reset during set-up, before or
// after the MPA exchange (ndkapp/status.h).
#include <gtest/gtest.h>

#include <string>

#include "ndkapp/status.h"

namespace {

using softndk::tools::connect_failure_text;
using softndk::tools::silent_peer_text;

SOFTNDK_PEER_ACTIVITY silent(ULONG wakes) {
  SOFTNDK_PEER_ACTIVITY a{};
  a.Size = sizeof a;
  a.Established = TRUE;
  a.SentFpdu = TRUE;
  a.PeerSpoke = FALSE;
  a.WakeUpsSent = wakes;
  return a;
}

TEST(SilentPeerText, NamesWhatHappenedTheLikelyCauseAndWhatToTry) {
  std::string t = silent_peer_text(silent(6));
  EXPECT_NE(t.find("accepted the connection (MPA exchange done)"), std::string::npos) << t;
  EXPECT_NE(t.find("never answered our first message"), std::string::npos);
  EXPECT_NE(t.find("6 zero-length RDMA Writes"), std::string::npos);
  EXPECT_NE(t.find("Linux siw"), std::string::npos);
  EXPECT_NE(t.find("docs/compatibility.md"), std::string::npos);
  EXPECT_NE(t.find("Try:"), std::string::npos);
  EXPECT_EQ(silent_peer_text(silent(0)).find("zero-length"), std::string::npos);
}

TEST(SilentPeerText, EmptyUnlessThePeerNeverSpokeAfterOurMessage) {
  SOFTNDK_PEER_ACTIVITY a = silent(1);
  a.PeerSpoke = TRUE;
  EXPECT_EQ(silent_peer_text(a), "");
  a = silent(1);
  a.SentFpdu = FALSE;  // nothing asked of it
  EXPECT_EQ(silent_peer_text(a), "");
  a = silent(1);
  a.Established = FALSE;
  EXPECT_EQ(silent_peer_text(a), "");
}

TEST(ConnectFailureText, SaysWhetherAResetCameBeforeOrAfterMpa) {
  const std::string w = "127.0.0.1:4420";
  EXPECT_NE(connect_failure_text(STATUS_CONNECTION_RESET, w, SOFTNDK_SETUP_TCP)
                .find("in the TCP handshake, before the MPA exchange"),
            std::string::npos);
  std::string mpa = connect_failure_text(STATUS_CONNECTION_RESET, w, SOFTNDK_SETUP_MPA);
  EXPECT_NE(mpa.find("before the MPA exchange"), std::string::npos) << mpa;
  EXPECT_NE(mpa.find("probe"), std::string::npos);
  // An orderly close where the Reply was due (the library's "aborted"):
  // a server that gave up on our bytes, likely no iWARP peer.
  std::string fin = connect_failure_text(STATUS_CONNECTION_ABORTED, w, SOFTNDK_SETUP_MPA);
  EXPECT_EQ(fin.rfind("the server at " + w +
                          " closed the connection without answering the MPA Request: not an "
                          "iWARP peer?",
                      0),
            0u)
      << fin;
  EXPECT_NE(connect_failure_text(STATUS_CONNECTION_ABORTED, w, SOFTNDK_SETUP_AFTER_MPA)
                .find("after the MPA exchange"),
            std::string::npos);
  // Without a phase: the old wording; other statuses unchanged.
  EXPECT_EQ(connect_failure_text(STATUS_CONNECTION_RESET, w),
            "connection to " + w + " was reset during set-up");
  EXPECT_NE(connect_failure_text(STATUS_CONNECTION_REFUSED, w, SOFTNDK_SETUP_TCP).find("refused"),
            std::string::npos);
}

}  // namespace
