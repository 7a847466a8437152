"""gunicorn settings, read from the working directory (``make run``, the README's deploy line).

gunicorn refuses an oversized request line or header itself, with an HTML page,
before the app sees the request. Its limits here are its ceilings; the app
refuses anything past its own, lower limits (``security.py``: a 4 KiB URL, 8 KiB
of headers) with 414 or 431 in the dialect of the service. Only a request past
these limits gets gunicorn's HTML.
"""

# The longest request line gunicorn accepts ("GET <url> HTTP/1.1").
limit_request_line = 8190
# Header fields per request, and bytes per field.
limit_request_fields = 100
limit_request_field_size = 8190
