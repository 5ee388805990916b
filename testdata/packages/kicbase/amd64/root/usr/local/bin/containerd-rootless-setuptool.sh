nerdctl binary (placeholder)
