#include "airtime/html/xml_check.h"

#include <cctype>
#include <string>
#include <vector>

namespace airtime {
namespace {

bool NameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool NameChar(char c) {
  return NameStart(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
}

class Checker {
 public:
  explicit Checker(std::string_view s) : s_(s) {}

  Status Run() {
    SkipSpace();
    if (s_.substr(i_, 9) == "<!DOCTYPE") {
      const size_t end = s_.find('>', i_);
      if (end == std::string_view::npos) return Error("unterminated DOCTYPE");
      i_ = end + 1;
    }
    int roots = 0;
    while (i_ < s_.size()) {
      if (s_[i_] == '<') {
        if (s_.substr(i_, 4) == "<!--") {
          const size_t end = s_.find("-->", i_ + 4);
          if (end == std::string_view::npos) return Error("unterminated comment");
          i_ = end + 3;
          continue;
        }
        if (s_.substr(i_, 2) == "</") {
          AIRTIME_RETURN_IF_ERROR(CloseTag());
          continue;
        }
        if (open_.empty() && ++roots > 1) return Error("a second root element");
        AIRTIME_RETURN_IF_ERROR(OpenTag());
        continue;
      }
      if (open_.empty() && !std::isspace(static_cast<unsigned char>(s_[i_])))
        return Error("text outside the root element");
      if (s_[i_] == '&') {
        AIRTIME_RETURN_IF_ERROR(Reference());
        continue;
      }
      ++i_;
    }
    if (!open_.empty()) return Error("<" + open_.back() + "> is never closed");
    if (roots == 0) return Error("no root element");
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument("not well-formed at byte " + std::to_string(i_) + ": " + what);
  }
  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  Status Name(std::string* name) {
    if (i_ >= s_.size() || !NameStart(s_[i_])) return Error("expected a name");
    const size_t start = i_;
    while (i_ < s_.size() && NameChar(s_[i_])) ++i_;
    *name = std::string(s_.substr(start, i_ - start));
    return OkStatus();
  }
  // &amp; &lt; &gt; &quot; &apos; &#N; &#xH;
  Status Reference() {
    const size_t end = s_.find(';', i_);
    if (end == std::string_view::npos || end - i_ > 10) return Error("a bare '&'");
    const std::string_view ref = s_.substr(i_ + 1, end - i_ - 1);
    bool ok = ref == "amp" || ref == "lt" || ref == "gt" || ref == "quot" || ref == "apos";
    if (!ok && ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      ok = !digits.empty();
      for (char c : digits)
        ok &= hex ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                  : std::isdigit(static_cast<unsigned char>(c)) != 0;
    }
    if (!ok) return Error("unknown entity '&" + std::string(ref) + ";'");
    i_ = end + 1;
    return OkStatus();
  }
  Status OpenTag() {
    ++i_;  // '<'
    std::string name;
    AIRTIME_RETURN_IF_ERROR(Name(&name));
    std::vector<std::string> attrs;
    for (;;) {
      const size_t before = i_;
      SkipSpace();
      if (i_ >= s_.size()) return Error("unterminated <" + name + ">");
      if (s_.substr(i_, 2) == "/>") {
        i_ += 2;
        return OkStatus();
      }
      if (s_[i_] == '>') {
        ++i_;
        open_.push_back(name);
        return OkStatus();
      }
      if (i_ == before) return Error("expected a space before an attribute of <" + name + ">");
      std::string attr;
      AIRTIME_RETURN_IF_ERROR(Name(&attr));
      for (const std::string& a : attrs)
        if (a == attr) return Error("attribute " + attr + " twice in <" + name + ">");
      attrs.push_back(attr);
      if (i_ >= s_.size() || s_[i_] != '=') return Error("attribute " + attr + " has no value");
      ++i_;
      if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '\''))
        return Error("attribute " + attr + " is not quoted");
      const char quote = s_[i_++];
      while (i_ < s_.size() && s_[i_] != quote) {
        if (s_[i_] == '<') return Error("'<' in the value of attribute " + attr);
        if (s_[i_] == '&') {
          AIRTIME_RETURN_IF_ERROR(Reference());
        } else {
          ++i_;
        }
      }
      if (i_ >= s_.size()) return Error("unterminated value of attribute " + attr);
      ++i_;
    }
  }
  Status CloseTag() {
    i_ += 2;
    std::string name;
    AIRTIME_RETURN_IF_ERROR(Name(&name));
    SkipSpace();
    if (i_ >= s_.size() || s_[i_] != '>') return Error("unterminated </" + name + ">");
    if (open_.empty() || open_.back() != name)
      return Error("</" + name + "> closes " +
                   (open_.empty() ? "nothing" : "<" + open_.back() + ">"));
    open_.pop_back();
    ++i_;
    return OkStatus();
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<std::string> open_;
};

}  // namespace

Status CheckWellFormedXml(std::string_view text) { return Checker(text).Run(); }

}  // namespace airtime
