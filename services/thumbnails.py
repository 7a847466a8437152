"""Thumbnails of attached images, made with Pillow when the image is uploaded.

A decompression bomb (a small file declaring a huge canvas) is refused from its header,
before any pixel is decoded: past ``MAX_PIXELS`` there is simply no thumbnail.
"""

from __future__ import annotations

import io
import logging
import warnings
from typing import BinaryIO

from PIL import Image, ImageOps

log = logging.getLogger(__name__)

MAX_PIXELS = 40_000_000  # about a 7,700 × 5,200 photo
THUMBNAIL_SIZE = (320, 320)
THUMBNAIL_TYPE = "image/png"
Image.MAX_IMAGE_PIXELS = MAX_PIXELS


def make_thumbnail(source: BinaryIO) -> bytes | None:
    """A PNG at most 320 × 320 of the image in ``source``, or None when it cannot be made."""
    try:
        with warnings.catch_warnings():
            # Pillow warns between MAX_IMAGE_PIXELS and twice it: treated as the bomb it may be.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(source) as image:
                if image.width * image.height > MAX_PIXELS:
                    return None
                image.draft("RGB", THUMBNAIL_SIZE)  # JPEG: decode at a reduced scale
                small = ImageOps.exif_transpose(image)
                small.thumbnail(THUMBNAIL_SIZE)
                if small.mode not in ("RGB", "RGBA", "L", "LA"):
                    small = small.convert("RGBA")
                out = io.BytesIO()
                small.save(out, "PNG", optimize=True)
                return out.getvalue()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning, OSError, ValueError, SyntaxError):
        log.info("no thumbnail for an image Pillow refused", exc_info=True)
        return None
