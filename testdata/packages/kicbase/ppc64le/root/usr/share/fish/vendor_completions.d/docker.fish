# docker-ce-cli (placeholder)
