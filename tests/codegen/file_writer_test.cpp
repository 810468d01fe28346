// Outputs are written all or nothing, and an unchanged file keeps its timestamp.
#include "file_writer.h"

#include <chrono>

#include "test_support.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

TEST_CASE("files are written, with their folders created") {
  TempDir dir;
  const WriteSummary summary =
      write_files({{dir / "a/b/one.h", "one\n"}, {dir / "two.cpp", "two\n"}});
  CHECK(summary.written == 2);
  CHECK(read_file(dir / "a/b/one.h") == "one\n");
  CHECK(read_file(dir / "two.cpp") == "two\n");
  CHECK(files_under(dir.path()).size() == 2);  // no temporaries left behind
}

TEST_CASE("a file whose content is unchanged is not rewritten") {
  TempDir dir;
  write_files({{dir / "same.h", "same\n"}, {dir / "changes.h", "old\n"}});
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(dir / "same.h", old_time);
  fs::last_write_time(dir / "changes.h", old_time);

  const WriteSummary summary =
      write_files({{dir / "same.h", "same\n"}, {dir / "changes.h", "new\n"}});
  CHECK(summary.unchanged == 1);
  CHECK(summary.written == 1);
  CHECK(fs::last_write_time(dir / "same.h") == old_time);
  CHECK(fs::last_write_time(dir / "changes.h") != old_time);
  CHECK(read_file(dir / "changes.h") == "new\n");
}

TEST_CASE("when one file cannot be placed, none is, and no temporary remains") {
  TempDir dir;
  fs::create_directories(dir / "blocked.h");  // a folder where a file should go
  write_file(dir / "blocked.h" / "keep", "x");
  const std::string error = error_of([&] {
    write_files({{dir / "first.h", "first\n"}, {dir / "blocked.h", "second\n"}});
  });
  CHECK(error == (dir / "blocked.h").string() + ": error: exists and is not a regular file");
  CHECK_FALSE(fs::exists(dir / "first.h"));
  CHECK(files_under(dir.path()).size() == 1);  // only blocked.h/keep
}
