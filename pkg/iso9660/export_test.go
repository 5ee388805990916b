package iso9660

// RockRidge reports whether the names come from Rock Ridge.
func (im *Image) RockRidge() bool { return im.rr }
