"""The bottom layer: what every other part of sift may import (it imports nothing of sift)."""
