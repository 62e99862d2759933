// Bounded YAML for device files and overlays (see device_file_yaml.hpp). One pass over the
// parser's events checks the bounds; only then does yaml-cpp build the tree the loader reads.
#include "core/device_file_yaml.hpp"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

#include "core/errors.hpp"

namespace nbx {
namespace {

[[noreturn]] void refuse(const std::string& path, int line, const std::string& what) {
  throw InvalidArgument("device file", path + ":" + std::to_string(line) + ": " + what);
}

int line_of(const YAML::Mark& mark) {
  return mark.line >= 0 ? mark.line + 1 : 1;
}

class BoundsCheck final : public YAML::EventHandler {
 public:
  explicit BoundsCheck(const std::string& path) : path_(path) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1)
      refuse(path_, line_of(mark), "starts a second YAML document; a device file is one.");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { node(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { no_anchors(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    node(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { --depth_; }
  void OnAnchor(const YAML::Mark& mark, const std::string&) override { no_anchors(mark); }

 private:
  void node(const YAML::Mark& mark, YAML::anchor_t anchor) const {
    if (anchor != YAML::NullAnchor) no_anchors(mark);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    node(mark, anchor);
    if (++depth_ > kDeviceFileMaxDepth)
      refuse(path_, line_of(mark),
             "nests mappings and lists more than " + std::to_string(kDeviceFileMaxDepth) +
                 " levels deep; a device file needs at most 5.");
  }
  [[noreturn]] void no_anchors(const YAML::Mark& mark) const {
    refuse(path_, line_of(mark),
           "uses a YAML anchor (&name) or alias (*name); device files write every value out.");
  }

  const std::string& path_;
  int depth_ = 0, documents_ = 0;
};

}  // namespace

YAML::Node load_device_file_yaml(std::string_view text, const std::string& display_path) {
  if (text.size() > kDeviceFileMaxBytes)
    refuse(display_path, 1,
           "is " + std::to_string(text.size()) + " bytes, more than a device file may be (" +
               std::to_string(kDeviceFileMaxBytes) + ").");
  const std::string owned(text);
  try {
    std::istringstream in(owned);
    YAML::Parser parser(in);
    BoundsCheck bounds(display_path);
    while (parser.HandleNextDocument(bounds)) {
    }
    YAML::Node root = YAML::Load(owned);
    if (!root.IsMap()) refuse(display_path, 1, "must be a YAML mapping at the top level.");
    return root;
  } catch (const YAML::Exception& e) {
    refuse(display_path, line_of(e.mark), "is not valid YAML: " + e.msg + ".");
  }
}

}  // namespace nbx
