// softndk-wdk-run (placeholder until the host lands).
int main() { return 64; }
