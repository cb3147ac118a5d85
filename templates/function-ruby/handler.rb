# A function: the platform calls handle(event) for every request.
def handle(event)
  name = event["message"] || "world"
  puts "greeting #{name}"
  { "reply" => "hello #{name}" }
end
