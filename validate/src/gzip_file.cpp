#include "mlasim/validate/gzip_file.h"

#include <fstream>
#include <iterator>
#include <limits>
#include <zlib.h>

#include "mlasim/model/input_error.h"
#include "mlasim/model/json_fields.h"

namespace mlasim::validate {

std::string read_maybe_gzip(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(field, path + ": cannot read");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    return bytes;
  if (bytes.size() > std::numeric_limits<uInt>::max()) throw InputError(field, path + ": a gzip file over 4 GiB");
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError(field, path + ": cannot start gzip decompression");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(bytes.data());
  z.avail_in = static_cast<uInt>(bytes.size());
  char buffer[1 << 16];
  int rc = Z_OK;
  while (true) {
    if (rc == Z_STREAM_END) {  // one member done: another may follow it
      if (z.avail_in == 0) break;
      if (inflateReset(&z) != Z_OK) {
        inflateEnd(&z);
        throw InputError(field, path + ": cannot go on to the next gzip member");
      }
    }
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&z);
      throw InputError(field, path + ": is not valid gzip (" + (z.msg ? std::string(z.msg) : "truncated") + ")");
    }
    out.append(buffer, sizeof buffer - z.avail_out);
    constexpr size_t kMaxBytes = size_t{2} << 30;  // a trace of millions of kernels stays far below this
    if (out.size() > kMaxBytes) {
      inflateEnd(&z);
      throw InputError(field, path + ": decompresses to more than 2 GiB");
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw InputError(field, path + ": is not valid gzip (truncated)");
    }
  }
  inflateEnd(&z);
  return out;
}

nlohmann::json read_json_maybe_gzip(const std::string& path, const std::string& field) {
  return parse_json_text(read_maybe_gzip(path, field), path, field);
}

}  // namespace mlasim::validate
