"""The engine's own HTTP/1.1 client for model APIs, and httpx where a proxy is configured."""
