"""gunicorn settings, read from the working directory (``make run``, the README's deploy line).

gunicorn refuses an oversized request line or header field itself, with an HTML
page, before the app sees the request. The app refuses anything past its own,
lower limits (``security.py``: a 4 KiB URL, 8 KiB of headers in all) with 414 or
431 in the dialect of the service, so only a request line past 8190 bytes (the
most gunicorn allows), a single header field past 16 KiB or more than 100 header
fields gets gunicorn's HTML.
"""

limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 16384
