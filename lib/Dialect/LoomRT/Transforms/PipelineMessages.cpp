//===- PipelineMessages.cpp - Can the stage programs wait forever? --------===//
//
// See PipelineMessages.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Dialect/LoomRT/Transforms/PipelineMessages.h"
#include "loom/Dialect/LoomRT/IR/LoomRTDialect.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::loomrt;

SmallVector<MessageEvent> loomrt::collectPipelineMessages(func::FuncOp func) {
  SmallVector<MessageEvent> events;
  DenseMap<Value, MessageEvent> started; // handle -> its start
  auto record = [&](auto start, MessageEvent::Kind kind, int64_t at) {
    if (start.getMeshAxis() != ::loom::MeshAxis::Pp)
      return;
    MessageEvent event;
    event.kind = kind;
    event.peer = static_cast<int64_t>(start.getPeer());
    event.tag = static_cast<int64_t>(start.getTag());
    event.handle = static_cast<int64_t>(started.size());
    event.at = static_cast<double>(at);
    event.op = start;
    started[start.getHandle()] = event;
    events.push_back(event);
  };
  int64_t at = 0;
  for (Operation &op : func.getBody().front()) {
    if (auto send = dyn_cast<SendStartOp>(op)) {
      record(send, MessageEvent::Kind::Send, at);
    } else if (auto recv = dyn_cast<RecvStartOp>(op)) {
      record(recv, MessageEvent::Kind::Recv, at);
    } else if (auto wait = dyn_cast<WaitOp>(op)) {
      auto it = started.find(wait.getHandle());
      if (it != started.end()) {
        MessageEvent event = it->second;
        event.kind = event.kind == MessageEvent::Kind::Send
                         ? MessageEvent::Kind::WaitSend
                         : MessageEvent::Kind::WaitRecv;
        event.at = static_cast<double>(at);
        event.op = wait;
        events.push_back(event);
      }
    }
    ++at;
  }
  return events;
}

SmallVector<StuckWait>
loomrt::findPipelineDeadlock(ArrayRef<SmallVector<MessageEvent>> stages) {
  // A message is (sender, receiver, tag); MPI matches the n-th send of one
  // with the n-th receive of it.
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  std::map<Key, int64_t> sent, posted; // how many started so far
  // Per stage: which occurrence of its message each start was.
  SmallVector<DenseMap<int64_t, int64_t>> occurrence(stages.size());
  SmallVector<size_t> next(stages.size(), 0);
  auto keyOf = [](int64_t stage, const MessageEvent &e) {
    bool sends = e.kind == MessageEvent::Kind::Send ||
                 e.kind == MessageEvent::Kind::WaitSend;
    return sends ? Key{stage, e.peer, e.tag} : Key{e.peer, stage, e.tag};
  };
  // Runs stage s up to its next wait that cannot complete yet; whether it
  // moved at all.
  auto advance = [&](int64_t s) {
    const SmallVector<MessageEvent> &events = stages[s];
    size_t &pc = next[s];
    size_t from = pc;
    for (; pc < events.size(); ++pc) {
      const MessageEvent &e = events[pc];
      Key key = keyOf(s, e);
      if (e.kind == MessageEvent::Kind::Send) {
        occurrence[s][e.handle] = sent[key]++;
      } else if (e.kind == MessageEvent::Kind::Recv) {
        occurrence[s][e.handle] = posted[key]++;
      } else {
        std::map<Key, int64_t> &other =
            e.kind == MessageEvent::Kind::WaitSend ? posted : sent;
        auto it = other.find(key);
        if (it == other.end() || it->second <= occurrence[s].lookup(e.handle))
          break;
      }
    }
    return pc != from;
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (int64_t s = 0, e = static_cast<int64_t>(stages.size()); s < e; ++s)
      moved |= advance(s);
  }
  SmallVector<StuckWait> stuck;
  for (auto [s, events] : llvm::enumerate(stages))
    if (next[s] < events.size())
      stuck.push_back({static_cast<int64_t>(s), events[next[s]]});
  return stuck;
}

std::string loomrt::describeStuckWaits(ArrayRef<StuckWait> stuck) {
  std::string text;
  for (const StuckWait &w : stuck) {
    if (!text.empty())
      text += "; ";
    bool send = w.wait.kind == MessageEvent::Kind::WaitSend;
    text += "stage " + std::to_string(w.stage) + " waits for its " +
            (send ? "send to stage " : "receive from stage ") +
            std::to_string(w.wait.peer) + " (tag " +
            std::to_string(w.wait.tag) + ")";
    bool peerStuck = llvm::any_of(
        stuck, [&](const StuckWait &o) { return o.stage == w.wait.peer; });
    if (!peerStuck)
      text += send ? ", whose receive that stage never posts"
                   : ", which that stage never sends";
  }
  return text;
}
