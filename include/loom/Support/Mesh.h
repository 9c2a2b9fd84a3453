//===- Mesh.h - Loom's device mesh and its rank layout ----------*- C++ -*-===//
//
// The one place that says how ranks form Loom's device mesh. A mesh is D
// data-parallel replicas of P pipeline stages of T tensor-parallel ranks,
// laid out row-major over the axes (dp, pp, tp), tp fastest:
//
//     r = (d * P + p) * T + t
//
// so a tensor-parallel group is T consecutive ranks (one node). The compiler
// declares this mesh as one `shard.grid @mesh(shape = DxPxT)` whose
// collectives name their axis (dp = 0, pp = 1, tp = 2), the interpreter and
// the runtime build their groups from it, and loomc / loom-run parse
// `--mesh dp=D,tp=T,pp=P` with parseMesh.
//
// Header-only, plain C++: the runtime (no LLVM/MLIR) includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_MESH_H
#define LOOM_SUPPORT_MESH_H

#include <array>
#include <cstdint>
#include <string>

namespace loom {

/// The axes of the mesh, in the order of the grid's dimensions.
enum class MeshAxis : int16_t { Dp = 0, Pp = 1, Tp = 2 };
constexpr int kNumMeshAxes = 3;
constexpr std::array<MeshAxis, kNumMeshAxes> kMeshAxes = {
    MeshAxis::Dp, MeshAxis::Pp, MeshAxis::Tp};

/// "dp", "pp" or "tp".
constexpr const char *meshAxisName(MeshAxis axis) {
  return axis == MeshAxis::Dp ? "dp" : axis == MeshAxis::Pp ? "pp" : "tp";
}

/// A rank's coordinates on the mesh.
struct MeshCoords {
  int64_t d = 0, p = 0, t = 0;
  int64_t &operator[](MeshAxis axis) {
    return axis == MeshAxis::Dp ? d : axis == MeshAxis::Pp ? p : t;
  }
  int64_t operator[](MeshAxis axis) const {
    return axis == MeshAxis::Dp ? d : axis == MeshAxis::Pp ? p : t;
  }
};

/// The sizes of the mesh's axes.
struct Mesh {
  int64_t dp = 1, pp = 1, tp = 1;

  int64_t &operator[](MeshAxis axis) {
    return axis == MeshAxis::Dp ? dp : axis == MeshAxis::Pp ? pp : tp;
  }
  int64_t operator[](MeshAxis axis) const {
    return axis == MeshAxis::Dp ? dp : axis == MeshAxis::Pp ? pp : tp;
  }
  /// The grid's shape: {dp, pp, tp}.
  std::array<int64_t, kNumMeshAxes> shape() const { return {dp, pp, tp}; }
  int64_t numRanks() const { return dp * pp * tp; }
  bool isTrivial() const { return numRanks() == 1; }

  /// The rank at `c`: (d * pp + p) * tp + t.
  int64_t rank(const MeshCoords &c) const { return (c.d * pp + c.p) * tp + c.t; }
  /// The coordinates of `rank`.
  MeshCoords coords(int64_t rank) const {
    return {rank / (tp * pp), (rank / tp) % pp, rank % tp};
  }
  /// The rank's index in its group along `axis` (the ranks that share its
  /// other coordinates), and a number that names that group (equal for the
  /// group's members, different between groups).
  int64_t groupRank(int64_t rank, MeshAxis axis) const {
    return coords(rank)[axis];
  }
  int64_t groupColour(int64_t rank, MeshAxis axis) const {
    MeshCoords c = coords(rank);
    c[axis] = 0;
    return this->rank(c);
  }

  /// "dp=D,tp=T,pp=P" (every axis, in the order users write them).
  std::string str() const {
    return "dp=" + std::to_string(dp) + ",tp=" + std::to_string(tp) +
           ",pp=" + std::to_string(pp);
  }
  /// The rank formula, as the plan and the docs state it.
  static const char *layout() { return "r = (d*pp + p)*tp + t"; }

  bool operator==(const Mesh &o) const {
    return dp == o.dp && pp == o.pp && tp == o.tp;
  }
  bool operator!=(const Mesh &o) const { return !(*this == o); }
};

/// Parses "dp=D,tp=T,pp=P" (any order, any subset; missing axes are 1) into
/// `mesh`. Returns an error message, empty on success.
inline std::string parseMesh(const std::string &text, Mesh &mesh) {
  mesh = Mesh();
  bool seen[kNumMeshAxes] = {false, false, false};
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string part = text.substr(start, end - start);
    start = end + 1;
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    part = trim(part);
    if (part.empty()) {
      if (end == text.size())
        break;
      continue;
    }
    size_t eq = part.find('=');
    std::string key = trim(part.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : trim(part.substr(eq + 1));
    int64_t n = 0;
    bool digits = !value.empty() && value.size() < 19;
    for (char c : value)
      digits = digits && c >= '0' && c <= '9';
    if (digits)
      n = std::stoll(value);
    if (!digits || n < 1)
      return "'" + part + "' is not AXIS=N with N >= 1";
    int axis = key == "dp" ? 0 : key == "pp" ? 1 : key == "tp" ? 2 : -1;
    if (axis < 0)
      return "unknown axis '" + key + "' (dp, tp, pp)";
    if (seen[axis])
      return "axis '" + key + "' is given twice";
    seen[axis] = true;
    mesh[kMeshAxes[axis]] = n;
  }
  return "";
}

} // namespace loom

#endif // LOOM_SUPPORT_MESH_H
