# Function shim for the ruby runtime (spec 1 §4.13 and §6.1).
#
# Copied into a workload's .platform/ directory; the user's handler.rb, one directory up,
# defines handle(event). Listens on 127.0.0.1:$PORT. Standard library only: WEBrick left
# Ruby's default gems in 3.0, so this is a small HTTP/1.1 server on TCPServer, one thread per
# connection, one request per connection (Connection: close).
require 'base64'
require 'io/wait'
require 'json'
require 'socket'

$stdout.sync = true
$stderr.sync = true

module PlatformShim
  MAX_BODY = 8 * 1024 * 1024
  MAX_HEADER_BYTES = 64 * 1024
  CE_CONTENT_TYPE = 'application/cloudevents+json'
  FUNCTION_DIR = File.dirname(File.dirname(File.expand_path(__FILE__)))
  # The daemon hands each instance a secret and sends it with every request it makes; a request
  # without it never reaches the handler (docs/decisions/agents.md, "Instances answer only the
  # daemon"). It leaves the environment before handler.rb loads.
  SECRET_ENV = 'PLATFORM_INSTANCE_SECRET'
  SECRET_HEADER = 'x-platform-instance-secret'
  FORBIDDEN = 'forbidden: this address answers only requests routed by the platform'
  REASONS = {
    200 => 'OK', 204 => 'No Content', 400 => 'Bad Request', 403 => 'Forbidden', 404 => 'Not Found', 413 => 'Content Too Large',
    431 => 'Request Header Fields Too Large', 500 => 'Internal Server Error', 501 => 'Not Implemented'
  }.freeze

  # A request that cannot be accepted; status and message go to the client.
  class BodyError < StandardError
    attr_reader :status

    def initialize(status, message)
      super(message)
      @status = status
    end
  end

  module_function

  def take_instance_secret
    value = ENV.fetch(SECRET_ENV, '')
    abort("function shim: #{SECRET_ENV} is not set (instances are started by the platform daemon)") if value.empty?
    scrub_process_environ(SECRET_ENV)
    ENV.delete(SECRET_ENV) # unsetenv(3): child processes do not inherit it either
    @secret = value.b.freeze
  end

  # Zeroes a variable's value in the process's initial environment block, which
  # /proc/<pid>/environ reads. Best effort: where /proc or writing our own memory file is not
  # allowed, only ENV loses it.
  def scrub_process_environ(name)
    block = File.binread('/proc/self/environ')
    prefix = "#{name}=".b
    start = if block.start_with?(prefix)
              prefix.bytesize
            else
              at = block.index("\0#{prefix}".b)
              return if at.nil?
              at + 1 + prefix.bytesize
            end
    stop = block.index("\0".b, start) || block.bytesize
    stat = File.binread('/proc/self/stat')
    env_start = Integer(stat[(stat.rindex(')') + 2)..].split(' ')[47]) # field 50 of proc(5)
    File.open('/proc/self/mem', 'r+b') do |mem|
      mem.seek(env_start + start)
      mem.write("\0" * (stop - start))
    end
  rescue SystemCallError, IOError, ArgumentError, TypeError
    nil
  end

  # Constant time for equal lengths, as Rack::Utils.secure_compare (no openssl load on start).
  def authorized?(headers)
    got = headers.fetch(SECRET_HEADER, '').b
    return false unless got.bytesize == @secret.bytesize
    diff = 0
    got.bytes.zip(@secret.bytes) { |a, b| diff |= a ^ b }
    diff.zero?
  end

  def load_handler
    path = File.join(FUNCTION_DIR, 'handler.rb')
    abort("function shim: handler.rb not found in #{FUNCTION_DIR}") unless File.file?(path)
    $LOAD_PATH.unshift(FUNCTION_DIR)
    # Top-level defs in handler.rb become private methods of Object, callable from here.
    load(path)
    abort('function shim: handler.rb must define handle(event)') unless Object.private_method_defined?(:handle) || Object.method_defined?(:handle)
  end

  def call_handler(event)
    TOPLEVEL_BINDING.receiver.send(:handle, event)
  end

  # Reads the request line and headers; header names are lowercased.
  def read_head(sock)
    line = sock.gets("\r\n", MAX_HEADER_BYTES)
    return nil if line.nil?
    method, target, = line.split(' ', 3)
    raise BodyError.new(400, 'malformed request line') if target.nil?
    headers = {}
    total = line.bytesize
    loop do
      field = sock.gets("\r\n", MAX_HEADER_BYTES)
      raise BodyError.new(400, 'connection closed in headers') if field.nil?
      total += field.bytesize
      raise BodyError.new(431, 'request headers too large') if total > MAX_HEADER_BYTES
      break if field == "\r\n" || field == "\n"
      name, value = field.split(':', 2)
      raise BodyError.new(400, 'malformed header') if value.nil?
      key = name.strip.downcase
      headers[key] = headers.key?(key) ? "#{headers[key]}, #{value.strip}" : value.strip
    end
    [method, target, headers]
  end

  def read_body(sock, headers)
    # curl asks before sending a body over 1 KiB and would otherwise wait a second for this.
    sock.write("HTTP/1.1 100 Continue\r\n\r\n") if headers.fetch('expect', '').casecmp?('100-continue')
    return read_chunked(sock) if headers.fetch('transfer-encoding', '').downcase.include?('chunked')
    length = headers['content-length']
    return ''.b if length.nil?
    # The framing needs the length; a malformed one is refused like any HTTP server does, but
    # the python-only "invalid Content-Length" text is not ours to give (spec 1 §4.13).
    raise BodyError.new(400, 'bad request: malformed Content-Length header') unless length.strip.match?(/\A\d+\z/)
    size = length.to_i
    raise BodyError.new(413, "body exceeds #{MAX_BODY} bytes") if size > MAX_BODY
    body = size.zero? ? ''.b : sock.read(size)
    raise BodyError.new(400, 'request body ended early') if body.nil? || body.bytesize < size
    body
  end

  def read_chunked(sock)
    body = ''.b
    loop do
      line = sock.gets("\r\n", 1024)
      raise BodyError.new(400, 'invalid chunked body') unless line&.end_with?("\n")
      size_text = line.split(';', 2).first.strip
      raise BodyError.new(400, 'invalid chunked body') unless size_text.match?(/\A\h+\z/)
      size = size_text.to_i(16)
      if size.zero?
        loop do
          trailer = sock.gets("\r\n", 8192)
          break if trailer.nil? || trailer == "\r\n" || trailer == "\n"
        end
        return body
      end
      raise BodyError.new(413, "body exceeds #{MAX_BODY} bytes") if body.bytesize + size > MAX_BODY
      chunk = sock.read(size)
      raise BodyError.new(400, 'invalid chunked body') if chunk.nil? || chunk.bytesize < size
      body << chunk
      sock.read(2)
    end
  end

  # Any JSON value passes through unwrapped; other text is refused before the handler runs.
  def parse_json(raw)
    return {} if raw.empty?
    JSON.parse(raw.dup.force_encoding(Encoding::UTF_8), quirks_mode: true)
  rescue JSON::ParserError => e
    raise BodyError.new(400, "invalid JSON body: #{e.message}")
  end

  def structured_data(raw)
    envelope = begin
      JSON.parse(raw.dup.force_encoding(Encoding::UTF_8))
    rescue JSON::ParserError => e
      raise BodyError.new(400, "invalid CloudEvent envelope: #{e.message}")
    end
    raise BodyError.new(400, 'invalid CloudEvent envelope: not a JSON object') unless envelope.is_a?(Hash)
    if envelope.key?('data_base64')
      text = envelope['data_base64']
      decoded = begin
        text.is_a?(String) ? Base64.strict_decode64(text) : nil
      rescue ArgumentError
        nil
      end
      raise BodyError.new(400, 'invalid CloudEvent envelope: data_base64 is not valid base64') if decoded.nil?
      return parse_json(decoded)
    end
    envelope.key?('data') ? envelope['data'] : {}
  end

  def respond(sock, status, body = nil)
    head = +"HTTP/1.1 #{status} #{REASONS.fetch(status, 'Status')}\r\nConnection: close\r\n"
    if body.nil? || status == 204 || status == 304
      head << "Content-Length: 0\r\n" unless status == 204 || status == 304
      sock.write(head << "\r\n")
    else
      data = body.b
      head << "Content-Type: application/json\r\nContent-Length: #{data.bytesize}\r\n\r\n"
      sock.write(Thread.current[:platform_head_request] ? head : head << data)
    end
  end

  def error(sock, status, message)
    # Parser messages quote the input, which may not be valid UTF-8.
    text = message.to_s.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD")
    respond(sock, status, JSON.generate({ 'error' => text }))
  end

  def describe(exc)
    "handler raised #{exc.class}: #{exc.message}"
  end

  def log_exception(exc)
    warn("#{exc.class}: #{exc.message}")
    warn(exc.backtrace.join("\n")) if exc.backtrace
  end

  def status_of(result)
    return 200 unless result.is_a?(Hash)
    key = result.key?('statusCode') ? 'statusCode' : (result.key?(:statusCode) ? :statusCode : nil)
    return 200 if key.nil?
    status = result[key]
    status.is_a?(Integer) && status.between?(200, 599) ? status : [:invalid, status]
  end

  def run_plain(sock, event)
    result = begin
      call_handler(event)
    rescue StandardError, ScriptError => e
      log_exception(e)
      return error(sock, 500, describe(e))
    end
    status = status_of(result)
    return error(sock, 500, "handler returned an invalid statusCode: #{status[1].inspect}") if status.is_a?(Array)
    body = begin
      JSON.generate(result, quirks_mode: true)
    rescue StandardError => e
      return error(sock, 500, "handler returned a value that is not JSON: #{e.message}")
    end
    respond(sock, status, body)
  end

  def run_cloudevent(sock, event)
    call_handler(event)
    respond(sock, 204)
  rescue StandardError, ScriptError => e
    # 400, not 500: the sender must not redeliver (spec 1 §6.1).
    log_exception(e)
    error(sock, 400, describe(e))
  end

  def serve_connection(sock)
    method, target, headers = read_head(sock)
    return if method.nil?
    unless authorized?(headers)
      error(sock, 403, FORBIDDEN)
      return linger(sock)
    end
    if method == 'GET' || method == 'HEAD'
      Thread.current[:platform_head_request] = method == 'HEAD'
      return respond(sock, 200, '{"status":"ok"}') if target.split('?', 2).first == '/healthz'
      return run_plain(sock, {})
    end
    raw = read_body(sock, headers)
    content_type = headers.fetch('content-type', '').split(';', 2).first.to_s.strip.downcase
    if headers.key?('ce-id')
      run_cloudevent(sock, parse_json(raw))
    elsif content_type == CE_CONTENT_TYPE
      run_cloudevent(sock, structured_data(raw))
    else
      run_plain(sock, parse_json(raw))
    end
  rescue BodyError => e
    error(sock, e.status, e.message)
    linger(sock)
  end

  # Half-close and discard unread input, so a refused upload still sees its response.
  def linger(sock)
    sock.close_write
    deadline = Time.now + 2
    left = 64 * 1024 * 1024
    while left.positive? && Time.now < deadline
      break unless sock.wait_readable(deadline - Time.now)
      chunk = sock.read_nonblock(65_536, exception: false)
      break if chunk.nil?
      left -= chunk.bytesize if chunk.is_a?(String)
    end
  rescue IOError, SystemCallError
    nil
  end

  def serve(port)
    server = TCPServer.new('127.0.0.1', port)
    loop do
      client = server.accept
      Thread.new(client) do |sock|
        serve_connection(sock)
      rescue IOError, SystemCallError
        nil
      rescue StandardError => e
        log_exception(e)
      ensure
        sock.close unless sock.closed?
      end
    end
  end
end

PlatformShim.take_instance_secret
PlatformShim.load_handler
PlatformShim.serve(Integer(ENV.fetch('PORT', '8080')))
