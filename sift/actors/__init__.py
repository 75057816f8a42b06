"""pykka actors: each owns one resource and answers messages on its own thread."""
