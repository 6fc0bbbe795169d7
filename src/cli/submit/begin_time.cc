#include "cli/submit/begin_time.h"

#include <cctype>
#include <optional>
#include <string>

#include "absl/time/civil_time.h"
#include "core/strings.h"

namespace loom::cli::submit {
namespace {

using core::StrCat;

struct Clock {
  int hour = 0, minute = 0, second = 0;
};
struct Date {
  int64_t year = 0;  // 0: not given
  int month = 0, day = 0;
};

class DateTimeParser {
 public:
  DateTimeParser(std::string_view text, int64_t now, const absl::TimeZone& zone)
      : s_(text), now_(now), zone_(zone) {}

  StatusOr<int64_t> Parse() {
    absl::CivilSecond today = absl::ToCivilSecond(absl::FromUnixSeconds(now_), zone_);
    while (true) {
      SkipSpaces();
      if (pos_ >= s_.size()) break;
      if (Word("now")) {
        RETURN_IF_ERROR(ParseNowOffset());
        if (!AtEnd()) return Fail(pos_);
        return now_ + offset_;
      }
      if (Word("today")) {
        date_ = Date{today.year(), today.month(), today.day()};
      } else if (Word("tomorrow")) {
        absl::CivilDay next = absl::CivilDay(today) + 1;
        date_ = Date{next.year(), next.month(), next.day()};
      } else if (Word("midnight")) {
        clock_ = Clock{0, 0, 0};
      } else if (Word("noon")) {
        clock_ = Clock{12, 0, 0};
      } else if (Word("fika")) {
        clock_ = Clock{15, 0, 0};
      } else if (Word("teatime")) {
        clock_ = Clock{16, 0, 0};
      } else if (IsDigit(pos_)) {
        RETURN_IF_ERROR(ParseNumbers());
      } else {
        return Fail(pos_);
      }
    }
    if (!date_ && !clock_) return Fail(pos_);
    Clock c = clock_.value_or(Clock{});
    auto at = [&](int64_t y, int m, int d) {
      return absl::ToUnixSeconds(
          absl::FromCivil(absl::CivilSecond(y, m, d, c.hour, c.minute, c.second), zone_));
    };
    if (!date_) {
      int64_t t = at(today.year(), today.month(), today.day());
      if (t < now_) {
        absl::CivilDay next = absl::CivilDay(today) + 1;
        t = at(next.year(), next.month(), next.day());
      }
      return t;
    }
    if (date_->year == 0) {
      int64_t t = at(today.year(), date_->month, date_->day);
      return t < now_ ? at(today.year() + 1, date_->month, date_->day) : t;
    }
    return at(date_->year, date_->month, date_->day);
  }

 private:
  Status Fail(size_t pos) const {
    return absl::InvalidArgumentError(StrCat("Invalid time specification (pos=", pos, "): ", s_));
  }
  bool IsDigit(size_t i) const {
    return i < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i]));
  }
  void SkipSpaces() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpaces();
    return pos_ >= s_.size();
  }
  // Consumes `word` (case-insensitive) when the text continues with it.
  bool Word(std::string_view word) {
    if (s_.size() - pos_ < word.size() ||
        !core::EqualsIgnoreCase(s_.substr(pos_, word.size()), word)) {
      return false;
    }
    pos_ += word.size();
    return true;
  }
  // Reads a run of digits; returns its value (nullopt when there is none or it is absurdly
  // long) and leaves pos_ after it.
  std::optional<int64_t> Number(size_t* digits = nullptr) {
    size_t start = pos_;
    while (IsDigit(pos_)) ++pos_;
    if (digits != nullptr) *digits = pos_ - start;
    if (pos_ == start || pos_ - start > 12) return std::nullopt;
    return core::ParseInt(s_.substr(start, pos_ - start));
  }

  // After "now": [{+|-} count [unit]].
  Status ParseNowOffset() {
    SkipSpaces();
    if (pos_ >= s_.size()) return absl::OkStatus();
    char sign = s_[pos_];
    if (sign != '+' && sign != '-') return Fail(pos_);
    size_t sign_pos = pos_++;
    SkipSpaces();
    std::optional<int64_t> count = Number();
    if (!count) return Fail(sign_pos);
    size_t last_digit = pos_ - 1;
    SkipSpaces();
    int64_t unit = 1;
    size_t word_start = pos_;
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    std::string word = core::ToLower(s_.substr(word_start, pos_ - word_start));
    bool no_unit = word.empty();
    if (word.size() > 1 && word.back() == 's') word.pop_back();
    if (no_unit || word == "second") {
      unit = 1;
    } else if (word == "minute") {
      unit = 60;
    } else if (word == "hour") {
      unit = 3600;
    } else if (word == "day") {
      unit = 86400;
    } else if (word == "week") {
      unit = 7 * 86400;
    } else {
      return Fail(last_digit);
    }
    offset_ = (sign == '+' ? 1 : -1) * *count * unit;
    return absl::OkStatus();
  }

  // Two digits at pos_ (a minute or a second); fails where a digit is missing, or at the
  // first digit when the value is above 59.
  StatusOr<int> TwoDigits() {
    size_t start = pos_;
    for (int k = 0; k < 2; ++k, ++pos_) {
      if (!IsDigit(pos_)) return Fail(pos_);
    }
    int v = (s_[start] - '0') * 10 + (s_[start + 1] - '0');
    if (v > 59) return Fail(start);
    return v;
  }

  // HH:MM[:SS][AM|PM], starting at pos_ (the hour's first digit).
  Status ParseClock() {
    size_t hour_pos = pos_;
    std::optional<int64_t> hour = Number();
    if (!hour || *hour > 23) return Fail(hour_pos);
    ++pos_;  // ':'
    ASSIGN_OR_RETURN(int minute, TwoDigits());
    int second = 0;
    if (pos_ < s_.size() && s_[pos_] == ':') {
      ++pos_;
      ASSIGN_OR_RETURN(second, TwoDigits());
    }
    size_t save = pos_;
    SkipSpaces();
    size_t meridian_pos = pos_;
    int h = static_cast<int>(*hour);
    bool am = Word("am");
    bool pm = !am && Word("pm");
    if (am || pm) {
      if (h > 12) return Fail(meridian_pos);
      h = (h % 12) + (pm ? 12 : 0);
    } else {
      pos_ = save;
    }
    clock_ = Clock{h, minute, second};
    return absl::OkStatus();
  }

  Status SetDate(int64_t year, int64_t month, size_t month_pos, int64_t day, size_t day_pos) {
    if (month < 1 || month > 12) return Fail(month_pos);
    if (day < 1 || day > 31) return Fail(day_pos);
    date_ = Date{year, static_cast<int>(month), static_cast<int>(day)};
    return absl::OkStatus();
  }

  // Two-digit years are 20YY.
  static int64_t FullYear(int64_t yy) { return yy < 100 ? 2000 + yy : yy; }

  // A token that starts with a digit: a time, or one of the date forms.
  Status ParseNumbers() {
    size_t start = pos_;
    size_t digits = 0;
    std::optional<int64_t> first = Number(&digits);
    char next = pos_ < s_.size() ? s_[pos_] : '\0';
    if (next == ':') {
      pos_ = start;
      return ParseClock();
    }
    if (next == '-' && digits == 4) {  // YYYY-MM-DD[THH:MM[:SS]], two-digit month and day
      size_t month_pos = pos_ + 1, day_pos = pos_ + 4;
      bool shaped = IsDigit(month_pos) && IsDigit(month_pos + 1) && day_pos - 1 < s_.size() &&
                    s_[day_pos - 1] == '-' && IsDigit(day_pos) && IsDigit(day_pos + 1) &&
                    !IsDigit(day_pos + 2);
      if (!shaped) return Fail(start);
      std::optional<int64_t> month = core::ParseInt(s_.substr(month_pos, 2));
      std::optional<int64_t> day = core::ParseInt(s_.substr(day_pos, 2));
      pos_ = day_pos + 2;
      RETURN_IF_ERROR(SetDate(*first, *month, month_pos, *day, day_pos));
      if (pos_ < s_.size() && s_[pos_] == 'T') {
        ++pos_;
        size_t hour_pos = pos_;
        Number();
        if (pos_ >= s_.size() || s_[pos_] != ':') return Fail(pos_);
        pos_ = hour_pos;
        return ParseClock();
      }
      return absl::OkStatus();
    }
    if ((next == '/' || next == '.') && digits <= 2) {  // MM/DD[/YY], MM.DD[.YY]
      size_t day_pos = ++pos_;
      std::optional<int64_t> day = Number();
      if (!day) return Fail(day_pos);
      int64_t year = 0;
      if (pos_ < s_.size() && s_[pos_] == next) {
        size_t year_pos = ++pos_;
        std::optional<int64_t> y = Number();
        if (!y) return Fail(year_pos);
        year = FullYear(*y);
      }
      RETURN_IF_ERROR(SetDate(year, *first, start, *day, day_pos));
      return ParseDashClock();
    }
    if (digits == 4 || digits == 6) {  // MMDD[YY]
      std::string_view d = s_.substr(start, digits);
      int64_t year = digits == 6 ? FullYear(*core::ParseInt(d.substr(4, 2))) : 0;
      RETURN_IF_ERROR(SetDate(year, *core::ParseInt(d.substr(0, 2)), start,
                              *core::ParseInt(d.substr(2, 2)), start + 2));
      return ParseDashClock();
    }
    if (digits > 6) {  // read as MMDDYY, which cannot fit
      std::string_view d = s_.substr(start, digits);
      RETURN_IF_ERROR(SetDate(0, *core::ParseInt(d.substr(0, 2)), start,
                              *core::ParseInt(d.substr(2, 2)), start + 2));
      return Fail(start + 6);
    }
    return Fail(pos_);
  }

  // An optional "-HH:MM[:SS]" right after a date (a lone trailing '-' is allowed).
  Status ParseDashClock() {
    if (pos_ < s_.size() && s_[pos_] == '-') {
      ++pos_;
      if (pos_ >= s_.size()) return absl::OkStatus();
      size_t hour_pos = pos_;
      Number();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail(pos_);
      pos_ = hour_pos;
      return ParseClock();
    }
    return absl::OkStatus();
  }

  std::string_view s_;
  int64_t now_;
  const absl::TimeZone& zone_;
  size_t pos_ = 0;
  int64_t offset_ = 0;
  std::optional<Date> date_;
  std::optional<Clock> clock_;
};

}  // namespace

StatusOr<int64_t> ParseSlurmDateTime(std::string_view text, int64_t now,
                                     const absl::TimeZone& zone) {
  return DateTimeParser(text, now, zone).Parse();
}

}  // namespace loom::cli::submit
