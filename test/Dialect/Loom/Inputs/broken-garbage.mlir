// Junk that is not UTF-8 where an op should be.
func.func @garbage() {
  ÿşÃ( junk €
  return
}
